import type { IncomingHttpHeaders } from 'node:http';
import { timingSafeEqual, createHash, randomBytes } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  CHAIN_FIELD,
  ProtocolError,
  authFailed,
  digestMatches,
  normalizeAgentId,
  envelopeSchema,
  forbidden,
  parseSignatureHeaders,
  schemaInvalid,
  verifyObjectSignature,
  verifyParsedSignature,
  type CallChain,
  type Envelope,
  type Mode,
  type RefusalStep,
} from '../protocol/index.js';
import type { AdmissionRule, TrafficFile } from '../protocol/console-api.js';
import type { AccessCheck, AccessRequest, HeldCall, SigningKeys } from './access-check.js';
import { checkDelegation } from './delegation.js';
import type { SignatureFormUsed } from './events.js';
import type { CallerAddress, PeerKeyResolver, ResolvedKey } from './peer-keys.js';
import { describeSchemaError, type RegisteredSkill, type SkillRegistry } from './skill-registry.js';
import { UNSIGNED_CALLER } from './skill.js';
import type { CallLimits } from '../state/call-limits.js';
import { checkLimits, screenCall, type PayloadScreen } from '../calls/admission.js';
import { chainOf, type HopGuard } from '../calls/hop-guard.js';
import { audienceRefusal, skillAccount, type SkillGrant } from '../calls/skill-access.js';
import { DEFAULT_SKILL } from '../protocol/skill-ids.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validateEnvelope = addFormats(new Ajv({ allErrors: false, strict: false })).compile<Envelope>(
  envelopeSchema,
);

export const MAX_AGE_MS = 5 * 60_000;
export const MAX_FUTURE_MS = 60_000;

export interface PipelineSettings {
  tokensPerDay: number;
  bearerTokens: string[];
  allowUnsigned: boolean;
  /** `flag`: the call goes on, marked; `refuse`: 400 INJECTION_DETECTED at the input step; `off`. */
  injectionScreen: 'flag' | 'refuse' | 'off';
  /** The longest delegation token lifetime accepted (PROTOCOL.md §9 sets none; a century was accepted). */
  delegationMaxLifetimeSeconds: number;
}

export type { PayloadScreen } from '../calls/admission.js';

export interface PipelineDeps {
  isOwnId(id: string): boolean;
  ownId(): string;
  skills: SkillRegistry;
  keys: PeerKeyResolver;
  /** Request limits, daily token budget and nonce window: in the data dir, or shared on Redis. */
  limits: CallLimits;
  settings(): PipelineSettings;
  /** Who may reach the skills; without one every verified sender is admitted (`open`). */
  access?: AccessCheck;
  screen?: PayloadScreen;
  /**
   * The hop guard: refuses a call too deep in its chain of calls, or one that came back (a loop); while an
   * accepted call runs, calls out continue its chain (run-skill.ts).
   */
  chains?: Pick<HopGuard, 'check' | 'enter'>;
  now?: () => number;
}

export interface ReceiveInput {
  mode: Mode;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The socket's address. */
  remoteAddress: string;
  /** The first X-Forwarded-For hop, when sent (spoofable: never used to grant anything). */
  forwardedFor?: string;
  /** Called once the sender's key lookup (the only wait before the sender is known) is over, either way. */
  onVerified?: () => void;
}

/** What the pipeline learnt so far: the operator's log shows it even when a later step refuses. */
export interface ReceiveTrace {
  sender?: string;
  skill?: string;
  traceId?: string;
  form: SignatureFormUsed;
  /** The injection screen's match (the log shows it whether the call went on or not). */
  screen?: { rule: string };
  /** The issuer of a delegation token that verified: the agent the sender acts for. */
  onBehalfOf?: string;
  /** The files the payload carries (the chat skills' attachments), as Traffic shows them. */
  files?: TrafficFile[];
  /** The chain of calls the envelope said it belongs to (call-chain.ts), once its shape passed. */
  chain?: CallChain;
  /**
   * The steps passed so far, in the order they ran: the log shows these ticked, and no other (an unsigned
   * call has no timestamp, signature or nonce to check; a call without a delegation token checks none).
   */
  passed?: RefusalStep[];
}

/** Notes on the trace that the call passed `steps`. */
export function passStep(trace: ReceiveTrace, ...steps: RefusalStep[]): void {
  (trace.passed ??= []).push(...steps);
}

export interface Accepted {
  envelope: Envelope;
  sender: string;
  entry: RegisteredSkill;
  /** The access rule that admitted the sender. */
  admittedBy: AdmissionRule;
  /** Async only: the task waits for the operator's approval of its sender. */
  held?: HeldCall;
  screen?: { rule: string };
  /** The name on the sender's card, when fetched (self-declared, one short line). */
  callerName?: string;
  /** The agent the sender acts for: the issuer of the delegation token that verified (PROTOCOL.md §9). */
  onBehalfOf?: string;
  /** That token's scope (skill ids, as the issuer wrote them). */
  delegationScope?: string[];
  /** The steps its receipt passed (ReceiveTrace.passed), for an async task's later log entry. */
  passed?: RefusalStep[];
  /** Tokens held against the sender's budget at step 5 (released when the call ends), and when. */
  reserved?: number;
  reservedAt?: number;
  /** Where its rate and tokens count: the sender's account with this skill (skillAccount); none: the sender's. */
  account?: string;
  /** The chain of calls it belongs to, when it said (its turn's calls out continue it: calls/hop-guard.ts). */
  chain?: CallChain;
}

/**
 * The one receive pipeline of PROTOCOL.md §4, shared by sync, async and stream. Each step throws a
 * ProtocolError naming the step; nothing is recorded before step 6 (the nonce: a refusal before it leaves
 * the envelope good for a retry; 3b only counts a waiting sender's repeated ask). Access is decided twice:
 * 3b, in memory before any limit is charged, so a sender that will be refused (denied, not on the
 * allowlist, already waiting) spends no one's rate limit, and one the operator has not decided on spends
 * the strangers' small bucket, never the agent-wide one (issue 15, finding 3); 8, last: only a verified
 * sender within its limits, with a fresh nonce and a valid payload, reaches the operator's pending list
 * (held or refused there, it has spent its nonce and retries with a new one), and only such a call of an
 * approved sender binds the keys it announces.
 */
export async function receive(
  deps: PipelineDeps,
  input: ReceiveInput,
  trace: ReceiveTrace,
): Promise<Accepted> {
  const now = deps.now ?? Date.now;
  const parsed = parseBody(input);

  const signedByHeaders =
    input.headers['signature-input'] !== undefined || input.headers.signature !== undefined;
  const signedInBody = parsed.signature !== undefined || parsed.kid !== undefined;
  if (!signedByHeaders && !signedInBody) return acceptUnsigned(deps, input, parsed, trace, now());
  trace.form = signedByHeaders && signedInBody ? 'both' : signedByHeaders ? 'headers' : 'envelope';

  // 1. Shape of the envelope.
  if (!validateEnvelope(parsed)) throw schemaInvalid(`Envelope ${describeEnvelopeError()}`);
  const envelope = parsed;
  // One identity per agent, whatever the case of its host or a default port (a denial or a limit cannot be
  // dodged by writing agent://Evil.com:443); the signatures still cover the id exactly as sent.
  const sender = normalizeAgentId(envelope.from);
  trace.sender = sender;
  trace.skill = envelope.skill;
  trace.traceId = envelope.traceId;
  if (!deps.isOwnId(envelope.to)) {
    throw schemaInvalid(
      `Envelope "to" is ${envelope.to}, but this agent is ${deps.ownId()}; address it to ${deps.ownId()}.`,
    );
  }
  if (envelope.mode !== input.mode) {
    throw schemaInvalid(
      `Envelope mode "${envelope.mode}" does not match ${input.path}, which takes mode "${input.mode}".`,
    );
  }
  if (envelope.callbackUrl != null && input.mode !== 'async') {
    throw schemaInvalid('callbackUrl is only allowed on /agent/task.');
  }
  passStep(trace, 'shape');

  // 2. Timestamp window: cheap, so it comes before any key lookup (a stale or future envelope never costs
  // a card fetch, whose budget is shared by every new sender).
  const sentAt = Date.parse(envelope.timestamp);
  const age = now() - sentAt;
  if (!Number.isFinite(sentAt) || age > MAX_AGE_MS) {
    throw authFailed(
      `Envelope timestamp ${envelope.timestamp} is more than 5 minutes old; send a fresh envelope with the current time.`,
      'timestamp',
    );
  }
  if (age < -MAX_FUTURE_MS) {
    throw authFailed(
      `Envelope timestamp ${envelope.timestamp} is more than 60 s in the future; check your clock.`,
      'timestamp',
    );
  }
  passStep(trace, 'timestamp');

  // 3. Signature(s): every form present must verify; a Content-Digest header, when sent, must match. The
  // digest is checked before the sender's key is looked up (PROTOCOL.md §3).
  const digest = header(input.headers['content-digest']);
  if (!signedByHeaders && digest !== undefined && !digestMatches(digest, input.body)) {
    throw authFailed('Content-Digest does not match the body: the body was altered or the digest is wrong.');
  }
  const caller = { address: input.remoteAddress, forwardedFor: input.forwardedFor };
  let signedWith: SigningKeys;
  try {
    const byHeaders = signedByHeaders
      ? await verifyHeaders(deps, input, envelope, sender, caller)
      : undefined;
    const inBody = signedInBody ? await verifyInEnvelope(deps, envelope, sender, caller) : undefined;
    signedWith = signingKeys(byHeaders, inBody);
  } finally {
    input.onVerified?.();
  }
  passStep(trace, 'signature');

  // 3b. Access, as far as memory knows it: refusals here cost no limit and keep the nonce.
  const request: AccessRequest = {
    sender,
    unsigned: false,
    mode: input.mode,
    payload: envelope.payload,
    signedWith,
  };
  const rule = deps.access ? deps.access.precheck(request) : 'open';

  // 3c. Delegation token, when sent: its issuer's key resolves as a sender's, through the same budgets.
  const settings = deps.settings();
  const grant =
    typeof envelope.delegationToken === 'string'
      ? await checkDelegation(
          { keys: deps.keys, now, maxLifetimeSeconds: settings.delegationMaxLifetimeSeconds },
          envelope,
          envelope.delegationToken,
          caller,
        )
      : undefined;
  if (grant) {
    trace.onBehalfOf = grant.issuer;
    passStep(trace, 'delegation');
  }

  // 3d. The chain of calls, when sent (its shape passed at step 1): too deep, or come back round a loop.
  // Refused here, a call costs no limit and keeps its nonce.
  const chain = checkChain(deps, envelope[CHAIN_FIELD], trace);

  // 4. Trust tier, and the skill's audience: who the operator opened it to (an unknown skill is reported
  // at step 7). Refused here, a call costs no limit and keeps its nonce.
  const entry = deps.skills.get(envelope.skill);
  if (entry) {
    checkTrust(entry, envelope, sender, settings.bearerTokens);
    checkAudience(deps, entry, request);
    passStep(trace, 'trust');
  }

  // 5. Rate limits and the daily token budget, then 6. the nonce: recorded only now that the request is
  // genuine and within limits (one step for the state they share, one round trip when it is on Redis). A
  // sender not yet decided on is charged to the strangers' bucket, never to the agent-wide one.
  // The call's estimated cost is reserved in the same step (concurrent calls cannot all pass the budget).
  // A skill's calls count on the sender's account with it, under the skill's own limits.
  const limits = callLimits(settings, entry, sender);
  const reserve = reservation(deps, limits.tokensPerDay, entry, envelope.payload);
  const reservedAt = now();
  await checkLimits(
    deps.limits,
    {
      sender,
      nonce: envelope.nonce,
      nonceExpiresAt: sentAt + MAX_AGE_MS + 1000,
      stranger: rule === undefined,
      reserve,
      ...limits,
    },
    entry?.skill.id,
  );
  passStep(trace, 'rate-limit', 'nonce');
  const account = limits.account ?? sender;

  try {
    // 7. Skill, mode and input (the injection screen is part of the input check).
    const checked = checkInput(entry, envelope, input.mode, trace);
    screenInput(deps, settings, checked, envelope.payload, trace);
    passStep(trace, 'input');

    // 8. Access: the operator's consent. Only verified senders within their limits get this far.
    const delegated = grant ? { onBehalfOf: grant.issuer, delegationScope: grant.scope } : {};
    const accepted = admit(deps, { envelope, sender, entry: checked, ...delegated }, request, rule, trace);
    if (limits.account) accepted.account = limits.account;
    if (chain) accepted.chain = chain;
    return keepReservation(deps, accepted, reserve, reservedAt);
  } catch (error) {
    if (reserve > 0) deps.limits.release(account, reserve, reservedAt);
    throw error;
  }
}

/** The chain a call carries, once checked by the hop guard (calls/hop-guard.ts); none: undefined. */
function checkChain(deps: PipelineDeps, value: unknown, trace: ReceiveTrace): CallChain | undefined {
  const chain = chainOf(value, `Envelope field "${CHAIN_FIELD}"`);
  if (!chain) return undefined;
  trace.chain = chain;
  deps.chains?.check(chain);
  passStep(trace, 'chain');
  return chain;
}

/** The skill's audience (calls/skill-access.ts): refused with AUTH_FAILED 403 when the caller is outside it. */
function checkAudience(deps: PipelineDeps, entry: RegisteredSkill, request: AccessRequest): void {
  const { audience, id } = entry.skill;
  if (!audience) return;
  const grant = deps.access ? deps.access.grant(request) : EVERYONE;
  const refusal = audienceRefusal({ id, audience }, grant, 'trust');
  if (refusal) throw refusal;
}

/** Without an access check, every verified sender is let in (`open`), none of them approved. */
const EVERYONE: SkillGrant = { approved: false, open: true };

/**
 * Where the call counts and under which limits: the sender's own account and the per-sender settings for
 * the default skill (and an unknown one, refused at step 7); its account with the skill, under the skill's
 * own limits where it sets them, for the others.
 */
function callLimits(
  settings: PipelineSettings,
  entry: RegisteredSkill | undefined,
  sender: string,
): { tokensPerDay: number; perSender?: number; account?: string } {
  const skill = entry?.skill;
  if (!skill || skill.id === DEFAULT_SKILL) return { tokensPerDay: settings.tokensPerDay };
  const own = skill.limits ?? {};
  return {
    tokensPerDay: own.tokensPerDay ?? settings.tokensPerDay,
    ...(own.requestsPerMinute === undefined ? {} : { perSender: own.requestsPerMinute }),
    account: skillAccount(sender, skill.id),
  };
}

/**
 * The reservation goes with the accepted call, whose mode releases it when the call ends; a held task runs,
 * if ever, once the operator approves, and holds nothing of the budget meanwhile.
 */
function keepReservation(deps: PipelineDeps, accepted: Accepted, reserve: number, at: number): Accepted {
  if (reserve === 0) return accepted;
  if (accepted.held) deps.limits.release(accepted.account ?? accepted.sender, reserve, at);
  else {
    accepted.reserved = reserve;
    accepted.reservedAt = at;
  }
  return accepted;
}

/** What a call to this skill may cost, held against the sender's daily budget (0: nothing to hold). */
function reservation(
  deps: PipelineDeps,
  tokensPerDay: number,
  entry: RegisteredSkill | undefined,
  payload: Record<string, unknown>,
): number {
  const estimate = entry?.skill.budgetEstimate;
  if (tokensPerDay <= 0 || !estimate) return 0;
  return Math.max(0, Math.ceil(estimate(payload, deps.limits.promptFloor())));
}

/**
 * The keys the access check sees are those that verified the signatures, never the ones a card lists: a
 * new holder of an id may list the old owner's key beside its own (issue 15, finding 2).
 */
function signingKeys(byHeaders: ResolvedKey | undefined, inBody: ResolvedKey | undefined): SigningKeys {
  const keys: string[] = [];
  if (byHeaders?.raw !== undefined) keys.push(byHeaders.raw);
  if (inBody?.raw !== undefined && inBody.raw !== byHeaders?.raw) keys.push(inBody.raw);
  return { keys, pinned: (byHeaders ?? inBody)?.source === 'pinned' };
}

/**
 * The skill reads what the payload carries beside its plain fields (Skill.readInput: the chat skills'
 * attachments, which it may refuse), then the injection screen reads the payload as the skill does.
 */
function screenInput(
  deps: PipelineDeps,
  settings: PipelineSettings,
  entry: RegisteredSkill,
  payload: Record<string, unknown>,
  trace: ReceiveTrace,
): void {
  const read = entry.skill.readInput?.(payload, (files) => (trace.files = files)) ?? payload;
  if (deps.screen) screenCall(deps.screen, settings.injectionScreen, read, (match) => (trace.screen = match));
}

function admit(
  deps: PipelineDeps,
  accepted: Pick<Accepted, 'envelope' | 'sender' | 'entry' | 'onBehalfOf' | 'delegationScope'>,
  request: AccessRequest,
  /** The precheck's answer (step 3b): undefined for a sender not decided on yet. */
  rule: AdmissionRule | undefined,
  trace: ReceiveTrace,
): Accepted {
  const name = request.unsigned ? undefined : deps.keys.describe(accepted.sender)?.name;
  // Built field by field (every call comes here): spreading the parts cost several µs per call.
  const result: Accepted = {
    envelope: accepted.envelope,
    sender: accepted.sender,
    entry: accepted.entry,
    admittedBy: 'open',
  };
  if (accepted.onBehalfOf !== undefined) result.onBehalfOf = accepted.onBehalfOf;
  if (accepted.delegationScope !== undefined) result.delegationScope = accepted.delegationScope;
  if (deps.access) {
    const verdict = deps.access.admit(request, rule);
    if (verdict.admitted) result.admittedBy = verdict.rule;
    else {
      result.admittedBy = 'approved';
      result.held = verdict.held;
    }
  }
  // Held: the access step holds it (the operator decides), it has not passed.
  if (!result.held) passStep(trace, 'access');
  if (trace.screen) result.screen = trace.screen;
  if (name) result.callerName = name;
  if (trace.passed) result.passed = trace.passed.slice();
  return result;
}

function parseBody(input: ReceiveInput): Record<string, unknown> {
  const type = input.headers['content-type'] ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw schemaInvalid(`Content-Type must be application/json (got "${type || 'none'}").`, 'shape', 415);
  }
  let value: unknown;
  try {
    value = JSON.parse(input.body.toString('utf8'));
  } catch {
    throw schemaInvalid('Request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw schemaInvalid('Request body must be a JSON object (a SAMVAD envelope).');
  }
  return value as Record<string, unknown>;
}

function describeEnvelopeError(): string {
  const error = validateEnvelope.errors?.[0];
  if (!error) return 'is invalid.';
  if (error.keyword === 'required')
    return `is missing the required field "${String(error.params.missingProperty)}".`;
  const field = error.instancePath.slice(1).replace(/\//g, '.') || 'body';
  return `field "${field}" ${error.message ?? 'is invalid'} (${error.keyword}).`;
}

async function verifyHeaders(
  deps: PipelineDeps,
  input: ReceiveInput,
  envelope: Envelope,
  /** `envelope.from` in its one spelling (normalizeAgentId). */
  sender: string,
  caller: CallerAddress,
): Promise<ResolvedKey> {
  const digest = header(input.headers['content-digest']);
  // The digest is checked before any Ed25519 work (PROTOCOL.md §3).
  if (!digest)
    throw authFailed(
      'Missing Content-Digest header: send sha-256=:<base64 of the body>: with the signature.',
    );
  if (!digestMatches(digest, input.body))
    throw authFailed('Content-Digest does not match the body: the body was altered or the digest is wrong.');
  const parsed = parseSignatureHeaders(
    header(input.headers['signature-input']) ?? '',
    header(input.headers.signature) ?? '',
  );
  if (typeof parsed === 'string') throw authFailed(parsed);
  for (const required of ['@method', '@path', 'content-digest']) {
    if (!parsed.components.includes(required)) {
      throw authFailed(
        `Signature-Input must cover "${required}"; sign ("@method" "@path" "content-digest").`,
      );
    }
  }
  const resolved = await deps.keys.resolve(sender, parsed.kid, caller);
  const headers: Record<string, string | undefined> = {};
  for (const component of parsed.components) headers[component] = header(input.headers[component]);
  if (!verifyParsedSignature(parsed, { method: input.method, path: input.path, headers }, resolved.key)) {
    throw authFailed(
      `Signature does not verify with key "${parsed.kid}" of ${envelope.from}: sign the exact body, method and path.`,
    );
  }
  return resolved;
}

async function verifyInEnvelope(
  deps: PipelineDeps,
  envelope: Envelope,
  /** `envelope.from` in its one spelling (normalizeAgentId). */
  sender: string,
  caller: CallerAddress,
): Promise<ResolvedKey> {
  if (typeof envelope.kid !== 'string' || typeof envelope.signature !== 'string') {
    throw authFailed('An in-envelope signature needs both "kid" and "signature".');
  }
  const resolved = await deps.keys.resolve(sender, envelope.kid, caller);
  if (!verifyObjectSignature(envelope as unknown as Record<string, unknown>, resolved.key)) {
    throw authFailed(
      `Envelope signature does not verify with key "${envelope.kid}" of ${envelope.from}: sign the canonical JSON of every field but "signature".`,
    );
  }
  return resolved;
}

function checkTrust(
  entry: RegisteredSkill,
  envelope: Envelope,
  sender: string,
  bearerTokens: string[],
): void {
  const { skill } = entry;
  if (skill.trust === 'authenticated') {
    const token = envelope.auth?.scheme === 'bearer' ? envelope.auth.token : undefined;
    if (!token)
      throw forbidden(
        `Skill "${skill.id}" needs authentication: send auth {"scheme":"bearer","token":"..."} with a token from the operator.`,
      );
    if (!bearerTokens.some((known) => sameSecret(known, token))) {
      throw forbidden(
        `The bearer token is not accepted for skill "${skill.id}"; ask the operator for a valid token.`,
      );
    }
  } else if (
    skill.trust === 'trusted-peers' &&
    !(skill.allowedPeers ?? []).some((peer) => normalizeAgentId(peer) === sender)
  ) {
    throw forbidden(
      `Skill "${skill.id}" is limited to trusted peers and ${envelope.from} is not one; ask the operator to add you to allowedPeers.`,
    );
  }
}

// Compares digests so the comparison takes the same time whatever the token's length or content.
function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function checkInput(
  entry: RegisteredSkill | undefined,
  envelope: Envelope,
  mode: Mode,
  trace: ReceiveTrace,
): RegisteredSkill {
  if (!entry)
    throw new ProtocolError(
      'SKILL_NOT_FOUND',
      404,
      `No skill "${envelope.skill}" here; the card at /.well-known/agent.json lists the skills.`,
      { step: 'skill' },
    );
  passStep(trace, 'skill');
  if (!entry.skill.modes.includes(mode)) {
    throw schemaInvalid(
      `Skill "${entry.skill.id}" does not offer mode "${mode}"; it offers ${entry.skill.modes.join(', ')}.`,
      'input',
    );
  }
  if (!entry.validate(envelope.payload))
    throw schemaInvalid(describeSchemaError(entry.validate.errors?.[0]), 'input');
  return entry;
}

/**
 * The reference SDK's bare `{skill, payload}` calls: refused unless the operator allows them, and then only
 * for public skills, rate-limited per caller address (PROTOCOL.md §4).
 */
async function acceptUnsigned(
  deps: PipelineDeps,
  input: ReceiveInput,
  body: Record<string, unknown>,
  trace: ReceiveTrace,
  now: number,
): Promise<Accepted> {
  trace.form = 'unsigned';
  if (!deps.settings().allowUnsigned) {
    throw authFailed(
      'This agent accepts signed envelopes only: add Content-Digest, Signature-Input and Signature headers (or "kid" and "signature" fields) signed with a key listed in your agent card.',
    );
  }
  const skillId = typeof body.skill === 'string' ? body.skill : undefined;
  trace.skill = skillId;
  const entry = skillId === undefined ? undefined : deps.skills.get(skillId);
  if (entry && (entry.skill.trust !== 'public' || (entry.skill.audience ?? 'public') !== 'public')) {
    throw authFailed(
      `Skill "${skillId}" is not public: unsigned calls are refused; send a signed envelope.`,
      'trust',
    );
  }
  const sender = `${UNSIGNED_CALLER}${input.remoteAddress}`;
  if (entry) {
    checkAudience(deps, entry, { sender, unsigned: true, mode: input.mode, payload: {} });
    passStep(trace, 'trust');
  }
  if (body.delegationToken != null) {
    throw authFailed(
      'A delegation token needs a signed envelope: its "sub" must match the verified sender. Sign the envelope, or leave delegationToken out.',
      'delegation',
    );
  }
  trace.sender = sender;
  const payload = body.payload;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw schemaInvalid('An unsigned call needs {"skill": "...", "payload": {...}}.');
  }
  passStep(trace, 'shape');
  const chain = checkChain(deps, body[CHAIN_FIELD], trace);
  // A policy that takes no unsigned calls refuses them here, before they spend the agent's rate limit.
  const request: AccessRequest = {
    sender,
    unsigned: true,
    mode: input.mode,
    payload: payload as Record<string, unknown>,
  };
  const rule = deps.access ? deps.access.precheck(request) : 'unsigned-open';
  const settings = deps.settings();
  const limits = callLimits(settings, entry, sender);
  const reserve = reservation(deps, limits.tokensPerDay, entry, payload as Record<string, unknown>);
  await checkLimits(deps.limits, { sender, nonceExpiresAt: 0, reserve, ...limits }, entry?.skill.id);
  passStep(trace, 'rate-limit');
  const account = limits.account ?? sender;
  const traceId = typeof body.traceId === 'string' ? body.traceId : randomBytes(8).toString('hex');
  trace.traceId = traceId;
  const envelope: Envelope = {
    from: sender,
    to: deps.ownId(),
    skill: skillId ?? '',
    mode: input.mode,
    nonce: '',
    timestamp: new Date(now).toISOString(),
    traceId,
    spanId: randomBytes(8).toString('hex'),
    payload: payload as Record<string, unknown>,
  };
  try {
    const checked = checkInput(entry, envelope, input.mode, trace);
    screenInput(deps, settings, checked, envelope.payload, trace);
    passStep(trace, 'input');
    const accepted = admit(deps, { envelope, sender, entry: checked }, request, rule, trace);
    if (limits.account) accepted.account = limits.account;
    if (chain) accepted.chain = chain;
    return keepReservation(deps, accepted, reserve, now);
  } catch (error) {
    if (reserve > 0) deps.limits.release(account, reserve, now);
    throw error;
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
