import type { Verdict } from '../api/contract';
import { Badge } from './Badge';

/** "accepted" in green; "held" (an async task waiting for the operator's approval) in amber; a refusal names the step that refused it. */
export function VerdictBadge({ verdict, held = false }: { verdict: Verdict; held?: boolean }) {
  if (verdict === 'accepted') {
    return held ? <Badge tone="warn">held for approval</Badge> : <Badge tone="ok">accepted</Badge>;
  }
  return <Badge tone="bad">refused: {verdict}</Badge>;
}
