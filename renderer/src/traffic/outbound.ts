/**
 * A call the operator's agent made through the bridge (direction `out`), as the stages it went through: the
 * operator's outbound policy, the per-minute cap, the other agent's answer, and the reply's signature. A
 * refusal without a SAMVAD code happened here, before anything left the machine; one with a code is the
 * other agent's own answer. A reply is signed and verified, unsigned (the protocol's own SDKs sign none:
 * used, with a caution, unless the operator requires signed replies), or failed its check (discarded).
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
  Partial<Pick<TrafficEntry, 'replySignature' | 'callee'>>;

export function outboundSteps(entry: OutboundEntry): OutboundStepView[] {
  const local = entry.code === undefined;
  const card = entry.endpoint === '/.well-known/agent.json';
  const refused = entry.verdict !== 'accepted';
  // Unsigned and refused without a code of the other agent's: the operator's outboundRequireSignedReplies.
  const unsignedRefused = refused && local && entry.replySignature === 'unsigned';
  const failedAt = !refused
    ? 4
    : local && (entry.verdict === 'access' || entry.verdict === 'shape')
      ? 0
      : local && entry.verdict === 'rate-limit'
        ? 1
        : entry.replySignature === 'failed' || unsignedRefused
          ? 3
          : 2;
  const detail =
    entry.code && entry.message
      ? `${entry.code}: ${entry.message}`
      : (entry.message ?? `HTTP ${entry.status}`);
  const state = (index: number): StepState =>
    index < failedAt ? 'pass' : index === failedAt ? 'fail' : 'not-run';
  const unsigned = entry.replySignature === 'unsigned';
  const steps: OutboundStepView[] = [
    { id: 'policy', label: 'Allowed by your outbound policy', state: state(0) },
    { id: 'cap', label: 'Within your requests-per-minute cap', state: state(1) },
    {
      id: 'answer',
      label: card ? 'Card fetched and valid' : 'The agent answered',
      // Its refusal is an answer too: the step failed, and the reply step below says how it was signed.
      state: failedAt === 3 ? 'pass' : state(2),
    },
    {
      id: 'reply',
      label: card
        ? 'Reply signature (cards are not signed)'
        : unsigned
          ? 'Reply unsigned: this agent’s software does not sign replies'
          : 'Reply signature verified against its card',
      state: unsignedRefused
        ? 'fail'
        : unsigned
          ? 'warn'
          : entry.replySignature === 'verified'
            ? 'pass'
            : entry.replySignature === 'failed'
              ? 'fail'
              : 'not-run',
    },
  ];
  const failed = steps[failedAt];
  if (failed) failed.detail = detail;
  const reply = steps[3] as OutboundStepView;
  if (reply.state === 'warn') {
    reply.detail =
      'Used as it came: its authenticity rests on HTTPS to the agent’s host. Settings › Calls out can refuse unsigned replies.';
  }
  return steps;
}
