import type { HopGuard } from '../calls/hop-guard.js';
import { ProtocolError, type Mode } from '../protocol/index.js';
import type { Accepted } from './pipeline.js';
import type { SkillContext } from './skill.js';

export interface RunHooks {
  signal: AbortSignal;
  emit?: (chunk: string) => void;
  progress?: (fraction: number) => void;
  reportUsage: (tokens: number, prompt?: number) => void;
  promptFloor: number;
  /** While the handler runs, calls out of the operator's agent continue this call's chain (hop-guard.ts). */
  chains?: Pick<HopGuard, 'enter'>;
}

const noop = (): undefined => undefined;

/** Runs a verified call's handler with the context every mode shares (step 8 of the pipeline). */
export async function runSkill(accepted: Accepted, mode: Mode, hooks: RunHooks): Promise<unknown> {
  // The caller built field by field (every call comes here): spreading optional parts cost µs per call.
  const caller: SkillContext['caller'] = {
    id: accepted.sender,
    trust: accepted.entry.skill.trust,
    admittedBy: accepted.admittedBy,
  };
  if (accepted.callerName) caller.name = accepted.callerName;
  if (accepted.screen) caller.screened = accepted.screen;
  if (accepted.onBehalfOf) {
    caller.onBehalfOf = accepted.onBehalfOf;
    caller.delegationScope = accepted.delegationScope ?? [];
  }
  const context: SkillContext = {
    envelope: accepted.envelope,
    sender: accepted.sender,
    payload: accepted.envelope.payload,
    caller,
    mode,
    signal: hooks.signal,
    emit: hooks.emit ?? noop,
    progress: hooks.progress ?? noop,
    reportUsage: hooks.reportUsage,
    promptFloor: hooks.promptFloor,
  };
  const leave = hooks.chains?.enter(accepted.chain);
  try {
    return await accepted.entry.skill.handler(context);
  } finally {
    leave?.();
  }
}

/**
 * What a caller may learn of a handler failure: a ProtocolError is meant for callers; anything else is
 * a bug whose message stays in the operator's log (koa's `expose` rule).
 */
export function callerError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  return new ProtocolError(
    'AGENT_UNAVAILABLE',
    500,
    'The skill failed unexpectedly; the operator can see the details in the agent log.',
    {
      step: 'handler',
    },
  );
}

/** The operator-facing detail of a failure (e.g. the gateway's diagnosis and fix), never sent to callers. */
export function operatorDiagnosis(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  const source = cause instanceof Error ? cause : error;
  const detail = source as Error & { diagnosis?: string; fix?: string };
  if (detail.diagnosis) return detail.fix ? `${detail.diagnosis} Fix: ${detail.fix}` : detail.diagnosis;
  return error instanceof ProtocolError && source === error ? undefined : source.message;
}
