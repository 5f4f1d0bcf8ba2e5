import { Badge } from './Badge';

/**
 * A demo run (`serve --demo`), said in the header of every page: nobody should take a reply for a model's,
 * or this agent for the operator's real one.
 */
export function DemoBadge() {
  return (
    <span className="demo-badge" data-testid="demo-badge">
      <Badge tone="warn">Demo</Badge>
      <span className="demo-badge-note">a stand-in gateway answers: no model is behind the replies</span>
    </span>
  );
}
