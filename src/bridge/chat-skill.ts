import { UNSIGNED_CALLER, type Skill } from '../agent/skill.js';
import { systemMessage } from './framing.js';
import { runGatewayTurn, turnEstimate, type GatewayTurnOptions } from './gateway-turn.js';

export { DEFAULT_PROMPT_TOKENS, type GatewayOutcome } from './gateway-turn.js';

export interface ChatResult {
  reply: string;
  channel: string;
}

export interface ChatSkillOptions extends GatewayTurnOptions {
  defaultChannel(): string;
  /** The operator's instructions for callers, framed into every call. */
  callerInstructions(): string;
  trust?: Skill['trust'];
  allowedPeers?: string[];
}

// A channel can never contain '#', and neither can an agent id: `sender#channel` keys are unambiguous.
const CHANNEL_PATTERN = '^[A-Za-z0-9._:@/-]{1,64}$';

/**
 * The gateway session of a call: (verified sender, channel). An unsigned caller (allow-unsigned) is named
 * by its address only, and behind a tunnel every one is `unsigned:127.0.0.1`: a channel it names
 * ("support") would be every stranger's session too (security review, finding 3). So it gets none: without
 * `user`, OpenClaw keys the call on a fresh `openai:<uuid>` (its resolveSessionKey), each call on its own.
 */
function gatewaySession(sender: string, channel: string): string {
  return sender.startsWith(UNSIGNED_CALLER) ? '' : `${sender}#${channel}`;
}

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
          description:
            'Conversation name (letters, digits and . _ : @ / -); defaults to the agent setting. Signed calls only: an unsigned call stands alone (no conversation is kept for it).',
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
    // Public: anyone the access policy admits, but for a caller whose approval is scoped to other skills.
    audience: 'public',
    ...(options.trust === 'trusted-peers' ? { allowedPeers: options.allowedPeers ?? [] } : {}),
    streamStyle: 'named',
    budgetEstimate(payload, promptFloor) {
      return turnEstimate(typeof payload.message === 'string' ? payload.message : '', promptFloor);
    },
    async handler(context) {
      const message = context.payload.message as string;
      const channel = (context.payload.channel as string | undefined) ?? options.defaultChannel();
      const reply = await runGatewayTurn(options, {
        message,
        system: systemMessage({
          caller: context.caller,
          channel,
          instructions: options.callerInstructions(),
        }),
        user: gatewaySession(context.sender, channel),
        signal: context.signal,
        onDelta: context.mode === 'stream' ? (text) => context.emit(text) : undefined,
        reportUsage: (tokens, prompt) => context.reportUsage(tokens, prompt),
        promptFloor: context.promptFloor,
      });
      return { reply: reply.reply, channel };
    },
  };
}
