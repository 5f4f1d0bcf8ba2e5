import type {
  A2AGate,
  A2ARequestInfo,
  AdmitNotes,
  ChatControl,
  ChatCore,
  ChatReply,
  ChatTurn,
  ChatTurnRequest,
} from './chat-core.js';
import { checkConversation, type MintedContexts } from './conversations.js';
import { A2AKeyGate, countedAs, type A2AKeyCaller, type A2AKeyGateOptions } from './key-gate.js';
import type { CallerInfo } from '../agent/skill.js';
import { skillSession } from '../bridge/chat-skill.js';
import { systemMessage } from '../bridge/framing.js';
import {
  callerRefusal,
  runGatewayTurn,
  turnEstimate,
  type GatewayTurnOptions,
} from '../bridge/gateway-turn.js';
import { DEFAULT_SKILL, ProtocolError, authFailed } from '../protocol/index.js';
import type { CallLimits } from '../state/call-limits.js';
import { chargeUsage, checkLimits, screenCall, type PayloadScreen } from '../calls/admission.js';
import { chatImages } from '../calls/attachments.js';
import { fetchImages, type AttachmentRules } from '../calls/image-fetch.js';
import type { HopGuard } from '../calls/hop-guard.js';
import { audienceRefusal, callerLimits, skillAccount, type SkillGrant } from '../calls/skill-access.js';
import type { SkillDirectory, SkillRuntime } from '../calls/skill-runtime.js';

export interface A2ACallsOptions extends A2AKeyGateOptions {
  /** The request limits, daily token budget and prompt floor SAMVAD callers pass too (data dir or Redis). */
  limits: CallLimits;
  settings(): { tokensPerDay: number; injectionScreen: 'flag' | 'refuse' | 'off' };
  screen?: PayloadScreen;
  /** Until when the operator declined this caller (the access lists' denials), if it did. */
  declinedUntil?(caller: string): number | undefined;
  /** The gateway, the restricted-agent rule and the gateway's outcomes: SAMVAD's chat skill's own. */
  gateway: GatewayTurnOptions;
  /**
   * The published skills, each on its own agent under its own rules (src/skills): a request is for its
   * door's skill. None: the default skill alone, on `gateway`.
   */
  skills?: SkillDirectory;
  /** The conversations minted here for keyless callers, as the task records bind them (conversations.ts). */
  mintedContexts: MintedContexts;
  /** The operator's instructions for callers, framed into every turn. */
  callerInstructions(): string;
  /** True once the agent is shutting down: new turns are refused (503), those running finish. */
  draining?(): boolean;
  /** How a message's images sent by URL are fetched now (the operator's settings); none: refused. */
  attachments?(): AttachmentRules;
  /**
   * The hop guard SAMVAD's pipeline uses too: a message too deep in its chain of calls, or come back round a
   * loop, is refused; while a turn runs, calls out of the operator's agent continue its chain.
   */
  chains?: Pick<HopGuard, 'check' | 'enter'>;
  now?: () => number;
}

/** What `admit` decided for one request, handed to its `run` (the caller object is the request's own). */
interface Admission {
  reserved: number;
  reservedAt: number;
  /** Where its tokens count: the caller's account with the skill. */
  account: string;
  screened?: { rule: string };
  /** Gives the reservation back if no run claims it (the SDK refused the turn after admission). */
  unclaimed: NodeJS.Timeout;
}

const KNOCKER_RUNS_NOTHING =
  "A caller without an A2A key runs nothing here until this agent's operator approves it: send your message without a key to ask, and follow the task it answers with.";

/** How long an admitted turn's reservation waits for its run to start before it is given back. */
const CLAIM_WITHIN_MS = 30_000;

/** A caller as authenticated at one skill's door: the skill it may call, every turn of the request runs. */
type SkillCaller = A2AKeyCaller & { readonly skill?: SkillRuntime };

/**
 * The A2A front door's gate and chat core on the caller core SAMVAD's pipeline uses, per skill (its door's):
 * the skill's audience, the operator's denials, limits (the stricter of the skill's and the key's own, or
 * the per-sender setting) and daily token budget with reservations on the caller's account with the skill,
 * injection screen, the skill's serving rule, framing and gateway turn on its agent. The key is the
 * operator's consent (issued by them, revocable at once), so a key holder never waits on the pairing list. A
 * key is the caller's identity everywhere (`a2a-key:<id>`; keyless callers under `open`: `a2a-anon:<address>`).
 */
export class A2ACalls implements A2AGate<A2AKeyCaller>, ChatCore<A2AKeyCaller> {
  private readonly keyGate: A2AKeyGate;
  private readonly admitted = new WeakMap<A2AKeyCaller, Admission>();
  /** The default skill when no directory is given (the front door's tests): chat on the `gateway` turn. */
  private readonly defaultSkill: SkillRuntime;

  constructor(private readonly options: A2ACallsOptions) {
    this.keyGate = new A2AKeyGate(options);
    this.defaultSkill = options.skills?.get(DEFAULT_SKILL) ?? {
      id: DEFAULT_SKILL,
      name: 'Chat',
      description: '',
      examples: [],
      audience: 'public',
      gateway: options.gateway,
    };
  }

  /**
   * Who calls, and whether the skill of the door is theirs to call (its audience: a key scoped to other
   * skills, a keyless caller at an approved one, is refused here with AUTH_FAILED 403, before anything of
   * the request is read or counted).
   */
  async authenticate(request: A2ARequestInfo): Promise<A2AKeyCaller> {
    const caller = await this.keyGate.authenticate(request);
    const { skills } = this.options;
    // Without published skills there is the default one, on the `gateway` turn.
    if (!skills && request.skill === undefined) return caller;
    const id = request.skill ?? DEFAULT_SKILL;
    const skill = skills?.get(id);
    if (!skill) {
      // Paused or removed since the door found it: as SAMVAD says of an unknown skill.
      throw new ProtocolError(
        'SKILL_NOT_FOUND',
        404,
        `No skill "${id}" is published here; the agent's card lists its skills.`,
        { step: 'skill' },
      );
    }
    // A knocker asks for the operator's consent (knock.ts): it runs nothing, at whatever skill it knocks.
    if (caller.knock) {
      const door = request.skill === undefined ? {} : { skill: request.skill };
      const knocking: SkillCaller = { ...caller, skill, knock: { ...caller.knock, ...door } };
      return knocking;
    }
    const grant: SkillGrant = {
      approved: caller.keyId !== undefined,
      ...(caller.skills ? { skills: caller.skills } : {}),
      open: this.options.policy() === 'open',
    };
    const refusal = audienceRefusal(skill, grant, 'access');
    if (refusal) throw refusal;
    const admitted: SkillCaller = { ...caller, skill };
    return admitted;
  }

  /**
   * Refuses what SAMVAD's pipeline refuses, in its order: the operator's denial, the restricted-agent rule
   * (nothing is forwarded, nothing counted), the limits and budget (the turn's estimated cost reserved), a
   * keyless caller's contextId that names no conversation minted for it (conversations.ts), the injection
   * screen. The reservation goes to the turn's `run`, which gives it back when the turn ends.
   */
  async admit(caller: A2AKeyCaller, turn: ChatTurnRequest, notes?: AdmitNotes): Promise<void> {
    const { options } = this;
    const now = options.now ?? Date.now;
    if (options.draining?.()) {
      throw new ProtocolError('AGENT_UNAVAILABLE', 503, 'The agent is shutting down; retry in a moment.', {
        step: 'handler',
        retryAfterSeconds: 5,
      });
    }
    // The front door sends a knocker's messages to the knocks, never here: refused, should one come.
    if (caller.knock) throw authFailed(KNOCKER_RUNS_NOTHING, 'access');
    this.refuseDeclined(caller);
    // Before the limits, as SAMVAD's step 3d: a loop refused costs nobody's rate or budget.
    options.chains?.check(turn.chain);
    const skill = this.skillOf(caller);
    const problem = skill.gateway.targetProblem?.();
    if (problem) throw callerRefusal(problem);
    const settings = options.settings();
    const { account, limits } = this.counted(caller, skill);
    const tokensPerDay = limits.tokensPerDay ?? settings.tokensPerDay;
    const images = turn.content?.images.length ?? 0;
    const reserved = tokensPerDay > 0 ? turnEstimate(turn.message, options.limits.promptFloor(), images) : 0;
    const reservedAt = now();
    await checkLimits(
      options.limits,
      {
        sender: caller.id,
        ...(account === caller.id ? {} : { account }),
        nonceExpiresAt: 0,
        tokensPerDay,
        perSender: limits.requestsPerMinute,
        reserve: reserved,
      },
      skill.id,
    );
    const release = () => {
      if (reserved > 0) options.limits.release(account, reserved, reservedAt);
    };
    notes?.passed('limits');
    let screened: { rule: string } | undefined;
    try {
      // After the limits: it reads the task records, and a stranger's guesses count as its calls.
      await checkConversation(options.mintedContexts, caller.id, turn.contextId);
      // After the limits too: a stranger's URLs cost it its own calls, and each fetch is bounded.
      if (turn.content) await fetchImages(turn.content, options.attachments?.());
      if (options.screen && settings.injectionScreen !== 'off') {
        const payload = { message: turn.message };
        screened = screenCall(options.screen, settings.injectionScreen, payload, (match) =>
          notes?.matched(match),
        );
        notes?.passed('screen');
      }
    } catch (error) {
      release();
      throw error;
    }
    const unclaimed = setTimeout(() => {
      this.admitted.delete(caller);
      release();
    }, CLAIM_WITHIN_MS);
    unclaimed.unref();
    this.admitted.set(caller, { reserved, reservedAt, screened, unclaimed, account });
  }

  /** The operator's denial, then the request limits (on the caller's account with the door's skill). */
  async admitRequest(caller: A2AKeyCaller): Promise<void> {
    // A knocker (its knock, a follow-up, a push config, a subscription): the strangers' bucket and its
    // address's own limit, never the requests per minute the callers the operator approved share.
    if (caller.knock) {
      await checkLimits(this.options.limits, {
        sender: countedAs(caller),
        nonceExpiresAt: 0,
        tokensPerDay: 0,
        stranger: true,
      });
      return;
    }
    this.refuseDeclined(caller);
    const skill = this.skillOf(caller);
    const { account, limits } = this.counted(caller, skill);
    await checkLimits(
      this.options.limits,
      {
        sender: caller.id,
        ...(account === caller.id ? {} : { account }),
        nonceExpiresAt: 0,
        // No budget: it spends none, so a caller that spent its day may still set configs and follow tasks.
        tokensPerDay: 0,
        perSender: limits.requestsPerMinute,
      },
      skill.id,
    );
  }

  async run(caller: A2AKeyCaller, turn: ChatTurn, control: ChatControl): Promise<ChatReply> {
    const { options } = this;
    const admission = this.admitted.get(caller);
    if (admission) {
      clearTimeout(admission.unclaimed);
      this.admitted.delete(caller);
    }
    const info: CallerInfo = {
      id: caller.id,
      name: caller.name,
      trust: 'public',
      admittedBy: caller.keyId === undefined ? 'unsigned-open' : 'approved',
      a2a: caller.issuedAt === undefined ? {} : { keyIssuedAt: caller.issuedAt },
    };
    if (admission?.screened) info.screened = admission.screened;
    const skill = this.skillOf(caller);
    const account = admission?.account ?? this.counted(caller, skill).account;
    const usage = options.skills?.usage;
    usage?.turn(skill.id);
    const leave = options.chains?.enter(turn.chain);
    try {
      const reply = await runGatewayTurn(skill.gateway, {
        message: turn.message,
        ...(turn.images?.length ? { images: chatImages(turn.images) } : {}),
        system: systemMessage({
          caller: info,
          channel: turn.contextId,
          instructions: options.callerInstructions(),
          ...(skill.framing ? { skill: skill.framing } : {}),
        }),
        // The caller's id is in the session: two callers using one contextId never share a conversation.
        // Keyless callers share an address: theirs are contextIds minted here, one each (conversations.ts).
        user: skillSession(caller.id, turn.contextId, skill.id),
        signal: control.signal,
        onDelta: control.onDelta,
        reportUsage: (tokens, prompt) => {
          usage?.tokens(skill.id, tokens);
          chargeUsage(options.limits, account, tokens, prompt);
        },
        promptFloor: options.limits.promptFloor(),
      });
      return reply.usage ? { reply: reply.reply, usage: reply.usage } : { reply: reply.reply };
    } finally {
      leave?.();
      if (admission && admission.reserved > 0)
        options.limits.release(account, admission.reserved, admission.reservedAt);
    }
  }

  /** The skill the caller came for (its door's); the default one, on the chat gateway, without skills. */
  private skillOf(caller: A2AKeyCaller): SkillRuntime {
    return (caller as SkillCaller).skill ?? this.defaultSkill;
  }

  /** Where the caller's calls to the skill count, under which limits (calls/skill-access.ts). */
  private counted(caller: A2AKeyCaller, skill: SkillRuntime) {
    return {
      account: skillAccount(caller.id, skill.id),
      limits: skill.limits ? callerLimits(skill.limits, caller.limits) : caller.limits,
    };
  }

  private refuseDeclined(caller: A2AKeyCaller): void {
    const declined = this.options.declinedUntil?.(caller.id);
    if (declined === undefined) return;
    throw new ProtocolError(
      'AUTH_FAILED',
      403,
      `This agent's operator declined ${caller.id}; do not retry before ${new Date(declined).toISOString()}.`,
      { step: 'access' },
    );
  }
}
