/**
 * A call the operator's agent made through the bridge (direction `out`), as the stages it went through: the
 * operator's outbound policy, the per-minute cap, the other agent's answer, and the reply's signature. A
 * refusal without a SAMVAD code happened here, before anything left the machine; one with a code is the
 * other agent's own (signed) answer.
 */
import type { TrafficEntry } from '../api/contract';
import type { StepState } from './steps';

export interface OutboundStepView {
  id: 'policy' | 'cap' | 'answer' | 'reply';
  label: string;
  state: StepState;
  detail?: string;
}

type OutboundEntry = Pick<TrafficEntry, 'verdict' | 'code' | 'message' | 'status' | 'endpoint'> &
  Partial<Pick<TrafficEntry, 'replyVerified' | 'callee'>>;

export function outboundSteps(entry: OutboundEntry): OutboundStepView[] {
  const local = entry.code === undefined;
  const card = entry.endpoint === '/.well-known/agent.json';
  const failedAt =
    entry.verdict === 'accepted'
      ? 4
      : local && (entry.verdict === 'access' || entry.verdict === 'shape')
        ? 0
        : local && entry.verdict === 'rate-limit'
          ? 1
          : entry.replyVerified === false
            ? 3
            : 2;
  const detail =
    entry.code && entry.message
      ? `${entry.code}: ${entry.message}`
      : (entry.message ?? `HTTP ${entry.status}`);
  const state = (index: number): StepState =>
    index < failedAt ? 'pass' : index === failedAt ? 'fail' : 'not-run';
  const steps: OutboundStepView[] = [
    { id: 'policy', label: 'Allowed by your outbound policy', state: state(0) },
    { id: 'cap', label: 'Within your calls-per-minute cap', state: state(1) },
    {
      id: 'answer',
      label: card ? 'Card fetched and valid' : 'The agent answered',
      // Its signed refusal is an answer too: the step failed, and the reply step below says it was signed.
      state: failedAt === 3 ? 'pass' : state(2),
    },
    {
      id: 'reply',
      label: card ? 'Reply signature (cards are not signed)' : 'Reply signature verified against its card',
      state: entry.replyVerified === true ? 'pass' : entry.replyVerified === false ? 'fail' : 'not-run',
    },
  ];
  const failed = steps[failedAt];
  if (failed) failed.detail = detail;
  return steps;
}
