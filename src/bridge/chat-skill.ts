import { UNSIGNED_CALLER, type Skill } from '../agent/skill.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';
import type { SkillSetting } from '../protocol/skills.js';
import { chatImages } from '../calls/attachments.js';
import { fetchImages, type AttachmentRules } from '../calls/image-fetch.js';
import { ATTACHMENTS_SCHEMA, chatContent, chatFiles } from './chat-attachments.js';
import { systemMessage, type FramedSkill } from './framing.js';
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
  /** Each turn run, and the tokens it cost (the Skills page's calls and tokens today). */
  usage?: SkillUsageSink;
  /** How `attachments` are taken now (the operator's settings); none: inline only. */
  attachments?(): AttachmentRules;
}

/** Where a skill's turns and tokens are counted (src/skills/skill-usage.ts). */
export interface SkillUsageSink {
  turn(skill: string): void;
  tokens(skill: string, tokens: number): void;
}

/** A published skill's gateway turn (its agent's model, its serving rule) and the chat skill's settings. */
export type AgentSkillOptions = Omit<ChatSkillOptions, 'trust' | 'allowedPeers'>;

// A channel can never contain '#', and neither can an agent id: `sender#channel` keys are unambiguous.
const CHANNEL_PATTERN = '^[A-Za-z0-9._:@/-]{1,64}$';

/**
 * The gateway session of a call: (verified sender, channel). An unsigned caller (allow-unsigned) is named
 * by its address only, and behind a tunnel every one is `unsigned:127.0.0.1`: a channel it names
 * ("support") would be every stranger's session too (security review, finding 3). So it gets none: without
 * `user`, OpenClaw keys the call on a fresh `openai:<uuid>` (its resolveSessionKey), each call on its own.
 */
function gatewaySession(sender: string, channel: string, skill: string): string {
  return sender.startsWith(UNSIGNED_CALLER) ? '' : skillSession(sender, channel, skill);
}

/**
 * A caller's conversation on the gateway: `<caller>#<conversation>` for chat, as before skills; prefixed
 * with `<skill>/` for the others, so a caller's conversations on two skills on one agent stay apart (a skill
 * id holds no `/` or `:`, and every caller id holds a `:` before any `/`).
 */
export function skillSession(caller: string, conversation: string, skill: string): string {
  return skill === DEFAULT_SKILL ? `${caller}#${conversation}` : `${skill}/${caller}#${conversation}`;
}

const INPUT_SCHEMA = {
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
    attachments: ATTACHMENTS_SCHEMA,
  },
};

const OUTPUT_SCHEMA = {
  type: 'object',
  required: ['reply', 'channel'],
  properties: { reply: { type: 'string' }, channel: { type: 'string' } },
};

/**
 * The bridge's built-in skill: forwards `payload.message` to the gateway's chat completions on the restricted
 * agent and returns the reply. Each (verified sender, channel) pair is its own conversation on the gateway.
 */
export function createChatSkill(options: ChatSkillOptions): Skill<ChatResult> {
  return {
    ...gatewaySkill(options),
    id: DEFAULT_SKILL,
    name: 'Chat',
    description:
      "Send a message to the operator's agent and get its reply. Conversations are kept per sender and channel.",
    trust: options.trust ?? 'public',
    ...(options.trust === 'trusted-peers' ? { allowedPeers: options.allowedPeers ?? [] } : {}),
    // Public: anyone the access policy admits, but for a caller whose approval is scoped to other skills.
    audience: 'public',
  };
}

/**
 * A skill the operator published (the `skills` setting): the same message and reply as `chat`, on its own
 * agent (the options' gateway turn), framed with its name, counted on each caller's account with it under
 * its own limits, and open to its audience only (checked by the pipeline at step 4). Its card shows
 * `trusted-peers` for a skill that is not public: SAMVAD has no word for "approved senders" (own-card.ts).
 */
export function createAgentSkill(setting: SkillSetting, options: AgentSkillOptions): Skill<ChatResult> {
  const framed: FramedSkill = { id: setting.id, name: setting.name, description: setting.description };
  return {
    ...gatewaySkill(options, framed),
    id: setting.id,
    name: setting.name,
    description: setting.description,
    trust: 'public',
    audience: setting.audience,
    limits: { ...setting.limits },
  };
}

function gatewaySkill(
  options: AgentSkillOptions,
  skill?: FramedSkill,
): Pick<
  Skill<ChatResult>,
  'inputSchema' | 'outputSchema' | 'modes' | 'streamStyle' | 'budgetEstimate' | 'readInput' | 'handler'
> {
  const id = skill?.id ?? DEFAULT_SKILL;
  const rules = () => options.attachments?.();
  return {
    inputSchema: INPUT_SCHEMA,
    outputSchema: OUTPUT_SCHEMA,
    modes: ['sync', 'async', 'stream'],
    streamStyle: 'named',
    budgetEstimate(payload, promptFloor) {
      const message = typeof payload.message === 'string' ? payload.message : '';
      // Before the schema's check (step 7, which refuses what cannot be read): the message alone then.
      let content;
      try {
        content = chatContent(payload, rules());
      } catch {
        content = undefined;
      }
      return turnEstimate(content?.text ?? message, promptFloor, content?.images.length ?? 0);
    },
    readInput(payload, noteFiles) {
      const files = chatFiles(payload);
      if (files.length > 0) noteFiles(files);
      const content = chatContent(payload, rules());
      // As taken (each type as the turn goes by it; an image fetched by URL: its size once fetched).
      if (content) noteFiles(content.files);
      return content && { message: content.text, channel: payload.channel };
    },
    async handler(context) {
      const content = chatContent(context.payload, rules());
      // After the limits (step 5): a caller's URLs cost it its own calls.
      if (content) await fetchImages(content, rules());
      const message = content?.text ?? (context.payload.message as string);
      const channel = (context.payload.channel as string | undefined) ?? options.defaultChannel();
      options.usage?.turn(id);
      const reply = await runGatewayTurn(options, {
        message,
        ...(content?.images.length ? { images: chatImages(content.images) } : {}),
        system: systemMessage({
          caller: context.caller,
          channel,
          instructions: options.callerInstructions(),
          ...(skill ? { skill } : {}),
        }),
        user: gatewaySession(context.sender, channel, id),
        signal: context.signal,
        onDelta: context.mode === 'stream' ? (text) => context.emit(text) : undefined,
        reportUsage: (tokens, prompt) => {
          options.usage?.tokens(id, tokens);
          context.reportUsage(tokens, prompt);
        },
        promptFloor: context.promptFloor,
      });
      return { reply: reply.reply, channel };
    },
  };
}
