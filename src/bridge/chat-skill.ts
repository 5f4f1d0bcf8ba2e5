import type { Skill } from '../agent/skill.js';
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
        // Unsigned callers are not told apart (behind a tunnel they share one address): no session for them.
        user: context.sender.startsWith('unsigned:') ? '' : `${context.sender}#${channel}`,
        signal: context.signal,
        onDelta: context.mode === 'stream' ? (text) => context.emit(text) : undefined,
        reportUsage: (tokens, prompt) => context.reportUsage(tokens, prompt),
        promptFloor: context.promptFloor,
      });
      return { reply: reply.reply, channel };
    },
  };
}
