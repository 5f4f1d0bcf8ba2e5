import { ProtocolError } from '../protocol/index.js';
import { GatewayError, gatewayError } from './diagnosis.js';
import { callGateway, partialCost, type ChatImage, type ChatUsage } from './gateway-client.js';
import type { ResolvedGateway } from './gateway-config.js';
import type { SystemMessage } from './framing.js';

/**
 * One caller's turn at the gateway, whichever protocol brought it (SAMVAD's chat skill, the A2A front
 * door): the restricted-agent rule, the call with its abort, the usage charged to the caller (also for a
 * turn cut short), the gateway's outcome for the operator, and the caller-safe refusal.
 */
export interface GatewayTurnOptions {
  /** The gateway settings as they are now (the operator may change them while running). */
  gateway(): ResolvedGateway;
  /**
   * Whether the target agent may be called now: a problem (the agent is missing on the gateway, or exposes
   * host tools the operator has not accepted) stops the call before anything is forwarded. Cached by the
   * caller: never a round trip per call.
   */
  targetProblem?(): GatewayError | undefined;
  /** Every gateway outcome, so the operator sees whether the gateway works and, if not, the fix. */
  onGatewayOutcome?(outcome: GatewayOutcome): void;
}

/** One chat call's outcome; `durationMs` when the gateway was called (not for a call stopped before it). */
export type GatewayOutcome =
  { ok: true; durationMs: number } | { ok: false; error: GatewayError; durationMs?: number };

export interface GatewayTurn {
  message: string;
  /** Images beside the message (the caller's attachments), as `image_url` parts. */
  images?: readonly ChatImage[];
  /** The framing (framing.ts): who calls, and that its text is untrusted. */
  system: SystemMessage;
  /** The gateway session: `<caller>#<conversation>`, or '' for callers that cannot be told apart. */
  user: string;
  signal: AbortSignal;
  /** Present: the gateway is asked to stream, and each piece of the reply comes here. */
  onDelta?: (text: string) => void;
  /** Tokens the turn cost its caller; `prompt` when the gateway reported its size (the prompt floor). */
  reportUsage(tokens: number, prompt?: number): void;
  /** The smallest prompt the gateway reported so far, 0 until one is known. */
  promptFloor: number;
}

const CHARS_PER_TOKEN = 4;
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * What a turn's prompt is taken to cost until the gateway has reported one (a fresh data dir or Redis): a
 * small OpenClaw agent's system prompt and tools (a usual one is several times this). Without it, a caller
 * who hangs up before the usage frame would pay only its own words on a fresh agent (review of issue 15).
 */
export const DEFAULT_PROMPT_TOKENS = 2000;
/** The reply a call is taken to produce while it runs, on top of its prompt (settled when it ends). */
export const REPLY_ALLOWANCE_TOKENS = 500;

/**
 * What one image is taken to cost until the gateway reports the turn's usage: about the most a vision model
 * charges for one after scaling it down (Anthropic: width x height / 750 tokens, images past 1.15 megapixels
 * scaled to fit, about 1,600; OpenAI's high detail: 1,105 for 2048x768). Its bytes say little: a 10 MB photo
 * and a 100 KB one cost the same once scaled.
 */
export const IMAGE_TOKENS = 1600;

/** What a turn with this message (and `images` images) may cost, held against its caller's daily budget. */
export function turnEstimate(message: string, promptFloor: number, images = 0): number {
  return (
    (promptFloor || DEFAULT_PROMPT_TOKENS) +
    estimateTokens(message.length) +
    images * IMAGE_TOKENS +
    REPLY_ALLOWANCE_TOKENS
  );
}

/**
 * Runs the turn; resolves with the reply and the gateway's usage, or rejects with a ProtocolError
 * (AGENT_UNAVAILABLE: 503 when no agent may be reached now, else 502) whose message a caller may read, or
 * with whatever else went wrong (a bug).
 */
export async function runGatewayTurn(
  options: GatewayTurnOptions,
  turn: GatewayTurn,
): Promise<{ reply: string; usage: ChatUsage | null }> {
  const { message } = turn;
  const imageTokens = (turn.images?.length ?? 0) * IMAGE_TOKENS;
  const resolved = options.gateway();
  let started: number | undefined;
  const elapsed = () => (started === undefined ? {} : { durationMs: performance.now() - started });
  try {
    if (resolved.status !== 'configured') throw gatewayError('not-configured', { detail: resolved.status });
    const problem = options.targetProblem?.();
    if (problem) throw problem;
    started = performance.now();
    const reply = await callGateway(resolved.config, {
      message,
      ...(turn.images?.length ? { images: turn.images } : {}),
      system: turn.system,
      user: turn.user,
      signal: turn.signal,
      onDelta: turn.onDelta,
    });
    options.onGatewayOutcome?.({ ok: true, durationMs: performance.now() - started });
    const { usage } = reply;
    // Without usage from the gateway, the sizes stand in (about 4 characters a token, IMAGE_TOKENS an
    // image), so the daily budget still bounds what a sender can make the gateway produce. The prompt it
    // reported may lower the prompt floor: what every turn costs it before the caller's words (its system
    // prompt, tools).
    if (usage) turn.reportUsage(usage.totalTokens, usage.promptTokens);
    else turn.reportUsage(estimateTokens(message.length + reply.reply.length) + imageTokens);
    return reply;
  } catch (error) {
    // A call the gateway had costs its sender even when it did not complete: otherwise a caller who
    // hangs up at 97 % of every stream gets its replies free (issue 15). The gateway's count if it
    // came, else the prompt (at least the smallest the gateway reported, or the default until it has
    // reported one) and the text passed on.
    const spent = partialCost(error);
    if (spent?.usage) turn.reportUsage(spent.usage.totalTokens, spent.usage.promptTokens);
    else if (spent) {
      const floor = turn.promptFloor || DEFAULT_PROMPT_TOKENS;
      const prompt = Math.max(floor, estimateTokens(message.length) + imageTokens);
      turn.reportUsage(prompt + estimateTokens(spent.deliveredChars));
    }
    if (!(error instanceof GatewayError)) throw error;
    // A caller leaving is not a gateway problem: do not report it as one.
    if (error.problem !== 'aborted') options.onGatewayOutcome?.({ ok: false, error, ...elapsed() });
    throw callerRefusal(error);
  }
}

/** Not configured, no agent callers may reach (targetProblem), or still starting: not serving (503). */
const UNAVAILABLE = [
  'not-configured',
  'agent-missing',
  'agent-exposed',
  'agent-unverified',
  'skill-unavailable',
  'starting',
];

/** A gateway problem as the caller hears it: the diagnosis stays with the operator (`cause`). */
export function callerRefusal(error: GatewayError): ProtocolError {
  return new ProtocolError(
    'AGENT_UNAVAILABLE',
    UNAVAILABLE.includes(error.problem) ? 503 : 502,
    error.callerMessage,
    {
      step: 'handler',
      cause: error,
      ...(error.problem === 'starting' ? { retryAfterSeconds: error.retryAfterSeconds ?? 5 } : {}),
    },
  );
}
