/**
 * The checks a call to this agent went through, in its protocol's own steps: SAMVAD's receive pipeline
 * (PROTOCOL.md §4) or the A2A door's (key, request, limits, screen, task). Only what the entry says ran is
 * ticked (`passed`, recorded by the core as each step ends); the step that refused the call failed, with
 * its message; every other step did not run, and where it was skipped rather than never reached, the
 * details say why (an unsigned call has no signature to verify, a read runs no turn). An async task held for
 * the operator's approval is held at `access`. An entry logged before the steps were recorded claims
 * nothing but the step that refused it (`notRecorded`).
 */
import {
  A2A_METHOD_STEPS,
  A2A_STEPS,
  PIPELINE_STEPS,
  type A2AStep,
  type AdmissionRule,
  type CheckStep,
  type RefusalStep,
  type TrafficEntry,
} from '../api/contract';

export type StepState = 'pass' | 'fail' | 'held' | 'warn' | 'not-run';

export interface StepView {
  step: CheckStep;
  label: string;
  state: StepState;
  detail?: string;
}

export const STEP_LABELS: Record<RefusalStep, string> = {
  size: 'Body within the size limit',
  shape: 'Envelope well formed',
  signature: 'Signature verifies',
  delegation: 'Delegation token valid (when sent)',
  chain: 'Not a loop: within the hop limit (when a chain was sent)',
  timestamp: 'Timestamp fresh',
  trust: 'Sender allowed',
  'rate-limit': 'Within rate limits',
  nonce: 'Nonce not seen before',
  skill: 'Skill exists',
  input: 'Input matches the skill schema',
  access: 'Sender admitted by the access policy',
  handler: 'Gateway answered',
};

export const A2A_STEP_LABELS: Record<A2AStep, string> = {
  key: 'A2A key valid',
  request: 'Request well formed',
  limits: 'Within limits (hops, rate, token budget, open streams, tasks)',
  screen: 'Message screened for prompt injection',
  task: 'Answered',
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
  Partial<
    Pick<
      TrafficEntry,
      'admittedBy' | 'held' | 'screen' | 'passed' | 'protocol' | 'a2a' | 'signatureForm' | 'mode' | 'sender'
    >
  >;

/** What the details say of an entry whose steps were not recorded (logged by an earlier version). */
export const NOT_RECORDED =
  'Logged before the checks each call passed were recorded: only the step that refused it is shown.';

export function notRecorded(entry: Pick<TrafficEntry, 'passed'>): boolean {
  return entry.passed === undefined;
}

export function verificationSteps(entry: StepEntry): StepView[] {
  return entry.protocol === 'a2a' ? a2aSteps(entry) : samvadSteps(entry);
}

function samvadSteps(entry: StepEntry): StepView[] {
  const failed = entry.verdict === 'accepted' ? undefined : entry.verdict;
  const held = entry.verdict === 'accepted' && entry.held === true;
  const reached = furthest(PIPELINE_STEPS, entry.passed, failed);
  return PIPELINE_STEPS.map((step, index) => {
    const view: StepView = { step, label: STEP_LABELS[step], state: 'not-run' };
    if (step === failed) return failedView(view, entry, step === 'input');
    if (step === 'access' && held) {
      return {
        ...view,
        state: 'held',
        // The core's message (with the request code) shows under Response.
        detail: 'Held: the task waits until you approve or deny its sender on the Access page.',
      };
    }
    if (entry.passed?.includes(step)) return withDetail({ ...view, state: 'pass' }, entry);
    if (notRecorded(entry)) return view;
    // Skipped, not merely never reached: the call went on past it (an async task's turn comes later).
    return index < reached || step === 'handler' ? skipped(view, entry) : view;
  });
}

/** A SAMVAD step the call went past without running: why, where the entry tells. */
function skipped(view: StepView, entry: StepEntry): StepView {
  const unsigned = entry.signatureForm === 'unsigned';
  switch (view.step) {
    case 'signature':
      return unsigned
        ? {
            ...view,
            state: 'warn',
            detail:
              'Unsigned: let in because the settings allow unsigned calls (public skills only, limited per address).',
          }
        : view;
    case 'timestamp':
    case 'nonce':
      return unsigned ? { ...view, detail: 'An unsigned call carries none.' } : view;
    case 'delegation':
      return { ...view, detail: 'No delegation token was sent.' };
    case 'chain':
      return { ...view, detail: 'The call named no chain of calls: it starts one.' };
    case 'handler':
      return entry.mode === 'async' && entry.verdict === 'accepted' && !entry.held
        ? {
            ...view,
            detail:
              'Runs after the 202 reply: the task shows how it ended (a failure is logged as its own entry).',
          }
        : view;
    default:
      return view;
  }
}

function a2aSteps(entry: StepEntry): StepView[] {
  const detail = entry.a2a;
  const failed = detail?.failedAt;
  const runs = detail?.method ? A2A_METHOD_STEPS[detail.method] : undefined;
  const reached = furthest(A2A_STEPS, entry.passed, failed);
  return A2A_STEPS.map((step, index) => {
    const view: StepView = { step, label: A2A_STEP_LABELS[step], state: 'not-run' };
    if (step === failed) return failedView(view, entry, step === 'screen');
    if (entry.passed?.includes(step)) return a2aPassed({ ...view, state: 'pass' }, entry);
    if (notRecorded(entry)) return view;
    if (runs && !runs.includes(step)) return { ...view, detail: `${detail?.method} does not run this step.` };
    if (step === 'screen' && index < reached) {
      return { ...view, detail: 'The injection screen is off (Settings).' };
    }
    return view;
  });
}

/** What a passed A2A step has to say: who a keyless caller is, what the screen flagged, the task's state. */
function a2aPassed(view: StepView, entry: StepEntry): StepView {
  // `a2a-anon:<address>`: the core's name for a keyless caller (src/agent/skill.ts).
  if (view.step === 'key' && entry.sender?.startsWith('a2a-anon:')) {
    return { ...view, detail: 'No key: a keyless caller, let in by the open policy.' };
  }
  if (view.step === 'screen' && entry.screen) {
    return { ...view, detail: `Flagged (rule “${entry.screen.rule}”) and let through.` };
  }
  if (view.step === 'task' && entry.a2a?.taskState) {
    return { ...view, detail: `The task is ${entry.a2a.taskState}.` };
  }
  return view;
}

/** The index after the last step the call passed or failed at: every step before it was reached. */
function furthest(
  steps: readonly CheckStep[],
  passed: readonly CheckStep[] | undefined,
  failed: CheckStep | undefined,
): number {
  let last = -1;
  for (const step of [...(passed ?? []), ...(failed ? [failed] : [])])
    last = Math.max(last, steps.indexOf(step));
  return last + 1;
}

function failedView(view: StepView, entry: StepEntry, screens: boolean): StepView {
  const screened = screens && entry.screen ? ` (injection screen rule “${entry.screen.rule}”)` : '';
  return { ...view, state: 'fail', detail: `${failureDetail(entry)}${screened}` };
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
