import type { Verdict } from '../api/contract';
import { Badge } from './Badge';

/** "accepted" in green; a refusal names the step that refused it. */
export function VerdictBadge({ verdict }: { verdict: Verdict }) {
  return verdict === 'accepted' ? (
    <Badge tone="ok">accepted</Badge>
  ) : (
    <Badge tone="bad">refused: {verdict}</Badge>
  );
}
