/**
 * The receive pipeline's verification steps for one envelope, derived from its verdict (PROTOCOL.md §4):
 * every step before the refusing one passed, the refusing one failed (with the message), later ones never
 * ran; an accepted envelope passed them all. An async task held for the operator's approval passed every
 * step up to `access`, which holds it, and has not reached the gateway yet.
 */
import { PIPELINE_STEPS, type AdmissionRule, type RefusalStep, type TrafficEntry } from '../api/contract';

export type StepState = 'pass' | 'fail' | 'held' | 'warn' | 'not-run';

export interface StepView {
  step: RefusalStep;
  label: string;
  state: StepState;
  detail?: string;
}

export const STEP_LABELS: Record<RefusalStep, string> = {
  size: 'Body within the size limit',
  shape: 'Envelope well formed',
  signature: 'Signature verifies',
  delegation: 'Delegation token valid (when sent)',
  timestamp: 'Timestamp fresh',
  trust: 'Sender allowed',
  'rate-limit': 'Within rate limits',
  nonce: 'Nonce not seen before',
  skill: 'Skill exists',
  input: 'Input matches the skill schema',
  access: 'Sender admitted by the access policy',
  handler: 'Gateway answered',
};

/** Why the access policy let a sender through, in the operator's words. */
export const ADMISSION_LABELS: Record<AdmissionRule, string> = {
  approved: 'a sender you approved',
  'allowed-peer': 'on the allowed peers list (Settings → Access)',
  self: 'this agent itself (the self-test)',
  open: 'the open policy: any verified sender',
  'unsigned-open': 'unsigned, let in by the open policy',
};

type StepEntry = Pick<TrafficEntry, 'verdict' | 'code' | 'message' | 'status'> &
  Partial<Pick<TrafficEntry, 'admittedBy' | 'held' | 'screen'>>;

export function verificationSteps(entry: StepEntry): StepView[] {
  const accessAt = PIPELINE_STEPS.indexOf('access');
  const held = entry.verdict === 'accepted' && entry.held === true && accessAt >= 0;
  const refusedAt = held
    ? accessAt
    : entry.verdict === 'accepted'
      ? PIPELINE_STEPS.length
      : PIPELINE_STEPS.indexOf(entry.verdict);
  return PIPELINE_STEPS.map((step, index) => {
    const view: StepView = { step, label: STEP_LABELS[step], state: 'not-run' };
    // An unknown verdict (a newer core) claims nothing: every step stays "not run".
    if (refusedAt < 0) return view;
    if (index < refusedAt) return withDetail({ ...view, state: 'pass' }, entry);
    if (index === refusedAt && held) {
      return {
        ...view,
        state: 'held',
        // The core's message (with the request code) shows under Response.
        detail: 'Held: the task waits until you approve or deny its sender on the Access page.',
      };
    }
    if (index === refusedAt) {
      const screened =
        step === 'input' && entry.screen ? ` (injection screen rule “${entry.screen.rule}”)` : '';
      return { ...view, state: 'fail', detail: `${failureDetail(entry)}${screened}` };
    }
    return view;
  });
}

/** What a passed step has to say: how the sender was admitted, or that the screen flagged the input. */
function withDetail(view: StepView, entry: StepEntry): StepView {
  if (view.step === 'access' && entry.admittedBy) {
    return { ...view, detail: `Admitted as ${ADMISSION_LABELS[entry.admittedBy] ?? entry.admittedBy}.` };
  }
  if (view.step === 'input' && entry.screen) {
    return {
      ...view,
      detail: `Flagged by the injection screen (rule “${entry.screen.rule}”) and let through.`,
    };
  }
  return view;
}

function failureDetail(entry: Pick<TrafficEntry, 'code' | 'message' | 'status'>): string {
  if (entry.code && entry.message) return `${entry.code}: ${entry.message}`;
  return entry.message ?? entry.code ?? `HTTP ${entry.status}`;
}
