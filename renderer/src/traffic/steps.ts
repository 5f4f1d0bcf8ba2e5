/**
 * The receive pipeline's verification steps for one envelope, derived from its verdict (PROTOCOL.md §4):
 * every step before the refusing one passed, the refusing one failed (with the message), later ones never
 * ran; an accepted envelope passed them all.
 */
import { PIPELINE_STEPS, type RefusalStep, type TrafficEntry } from '../api/contract';

export type StepState = 'pass' | 'fail' | 'not-run';

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
  timestamp: 'Timestamp fresh',
  trust: 'Sender allowed',
  'rate-limit': 'Within rate limits',
  nonce: 'Nonce not seen before',
  skill: 'Skill exists',
  input: 'Input matches the skill schema',
  handler: 'Gateway answered',
};

export function verificationSteps(
  entry: Pick<TrafficEntry, 'verdict' | 'code' | 'message' | 'status'>,
): StepView[] {
  const refusedAt =
    entry.verdict === 'accepted' ? PIPELINE_STEPS.length : PIPELINE_STEPS.indexOf(entry.verdict);
  return PIPELINE_STEPS.map((step, index) => {
    const view: StepView = { step, label: STEP_LABELS[step], state: 'not-run' };
    // An unknown verdict (a newer core) claims nothing: every step stays "not run".
    if (refusedAt < 0) return view;
    if (index < refusedAt) return { ...view, state: 'pass' };
    if (index === refusedAt) return { ...view, state: 'fail', detail: failureDetail(entry) };
    return view;
  });
}

function failureDetail(entry: Pick<TrafficEntry, 'code' | 'message' | 'status'>): string {
  if (entry.code && entry.message) return `${entry.code}: ${entry.message}`;
  return entry.message ?? entry.code ?? `HTTP ${entry.status}`;
}
