import { ProtocolError } from '../protocol/index.js';
import type { Skill } from '../agent/skill.js';
import { GatewayError, gatewayError } from './diagnosis.js';
import { systemMessage } from './framing.js';
import { callGateway, partialCost } from './gateway-client.js';
import type { ResolvedGateway } from './gateway-config.js';

export interface ChatResult {
  reply: string;
  channel: string;
}

export interface ChatSkillOptions {
  /** The gateway settings as they are now (the operator may change them while running). */
  gateway(): ResolvedGateway;
  defaultChannel(): string;
  /** The operator's instructions for callers, framed into every call. */
  callerInstructions(): string;
  /**
   * Whether the target agent may be called now: a problem (the agent is missing on the gateway) stops the
   * call before anything is forwarded. Cached by the caller: never a round trip per call.
   */
  targetProblem?(): GatewayError | undefined;
  trust?: Skill['trust'];
  allowedPeers?: string[];
  /** Every gateway outcome, so the operator sees whether the gateway works and, if not, the fix. */
  onGatewayOutcome?(outcome: GatewayOutcome): void;
}

/** One chat call's outcome; `durationMs` when the gateway was called (not for a call stopped before it). */
export type GatewayOutcome =
  { ok: true; durationMs: number } | { ok: false; error: GatewayError; durationMs?: number };

const CHARS_PER_TOKEN = 4;
function estimateTokens(chars: number): number {
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

// A channel can never contain '#', and neither can an agent id: `sender#channel` keys are unambiguous.
const CHANNEL_PATTERN = '^[A-Za-z0-9._:@/-]{1,64}$';

/**
 * The bridge's one skill: forwards `payload.message` to the gateway's chat completions and returns the
 * reply. Each (verified sender, channel) pair is its own conversation on the gateway.
 */
export function createChatSkill(options: ChatSkillOptions): Skill<ChatResult> {
  return {
    id: 'chat',
    name: 'Chat',
    description:
      "Send a message to the operator's agent and get its reply. Conversations are kept per sender and channel.",
    inputSchema: {
      type: 'object',
      required: ['message'],
      additionalProperties: false,
      properties: {
        message: {
          type: 'string',
          minLength: 1,
          maxLength: 32_000,
          description: 'What to say to the agent.',
        },
        channel: {
          type: 'string',
          pattern: CHANNEL_PATTERN,
          description: 'Conversation name (letters, digits and . _ : @ / -); defaults to the agent setting.',
        },
      },
    },
    outputSchema: {
      type: 'object',
      required: ['reply', 'channel'],
      properties: { reply: { type: 'string' }, channel: { type: 'string' } },
    },
    modes: ['sync', 'async', 'stream'],
    trust: options.trust ?? 'public',
    ...(options.trust === 'trusted-peers' ? { allowedPeers: options.allowedPeers ?? [] } : {}),
    streamStyle: 'named',
    budgetEstimate(payload, promptFloor) {
      const words = typeof payload.message === 'string' ? estimateTokens(payload.message.length) : 0;
      return (promptFloor || DEFAULT_PROMPT_TOKENS) + words + REPLY_ALLOWANCE_TOKENS;
    },
    async handler(context) {
      const message = context.payload.message as string;
      const channel = (context.payload.channel as string | undefined) ?? options.defaultChannel();
      const resolved = options.gateway();
      let started: number | undefined;
      const elapsed = () => (started === undefined ? {} : { durationMs: performance.now() - started });
      try {
        if (resolved.status !== 'configured')
          throw gatewayError('not-configured', { detail: resolved.status });
        const problem = options.targetProblem?.();
        if (problem) throw problem;
        started = performance.now();
        const reply = await callGateway(resolved.config, {
          message,
          system: systemMessage({
            caller: context.caller,
            channel,
            instructions: options.callerInstructions(),
          }),
          // Unsigned callers are not told apart (behind a tunnel they share one address): no session for them.
          user: context.sender.startsWith('unsigned:') ? '' : `${context.sender}#${channel}`,
          signal: context.signal,
          onDelta: context.mode === 'stream' ? (text) => context.emit(text) : undefined,
        });
        options.onGatewayOutcome?.({ ok: true, durationMs: performance.now() - started });
        const { usage } = reply;
        // Without usage from the gateway, the sizes stand in (about 4 characters a token), so the daily
        // budget still bounds what a sender can make the gateway produce. The prompt it reported may lower
        // the prompt floor: what every turn costs it before the caller's words (its system prompt, tools).
        if (usage) context.reportUsage(usage.totalTokens, usage.promptTokens);
        else context.reportUsage(estimateTokens(message.length + reply.reply.length));
        return { reply: reply.reply, channel };
      } catch (error) {
        // A call the gateway had costs its sender even when it did not complete: otherwise a caller who
        // hangs up at 97 % of every stream gets its replies free (issue 15). The gateway's count if it
        // came, else the prompt (at least the smallest the gateway reported, or the default until it has
        // reported one) and the text passed on.
        const spent = partialCost(error);
        if (spent?.usage) context.reportUsage(spent.usage.totalTokens, spent.usage.promptTokens);
        else if (spent) {
          const floor = context.promptFloor || DEFAULT_PROMPT_TOKENS;
          const prompt = Math.max(floor, estimateTokens(message.length));
          context.reportUsage(prompt + estimateTokens(spent.deliveredChars));
        }
        if (!(error instanceof GatewayError)) throw error;
        // A caller leaving is not a gateway problem: do not report it as one.
        if (error.problem !== 'aborted') options.onGatewayOutcome?.({ ok: false, error, ...elapsed() });
        // Not configured, no agent callers may reach (targetProblem), or still starting: not serving (503).
        const unavailable = [
          'not-configured',
          'agent-missing',
          'agent-exposed',
          'agent-unverified',
          'starting',
        ].includes(error.problem);
        throw new ProtocolError('AGENT_UNAVAILABLE', unavailable ? 503 : 502, error.callerMessage, {
          step: 'handler',
          cause: error,
          ...(error.problem === 'starting' ? { retryAfterSeconds: error.retryAfterSeconds ?? 5 } : {}),
        });
      }
    },
  };
}
