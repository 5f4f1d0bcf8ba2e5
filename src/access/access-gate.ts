import { randomUUID } from 'node:crypto';
import type { AccessCheck, AccessRequest, AccessVerdict, SigningKeys } from '../agent/access-check.js';
import type { SkillGrant } from '../calls/skill-access.js';
import { oneLine } from '../lib/text.js';
import type { AccessPolicy, AdmissionRule } from '../protocol/console-api.js';
import { ProtocolError, normalizeAgentId } from '../protocol/index.js';
import type { AccessStore, ApprovedRecord, PendingRecord } from './access-store.js';

export interface AccessGateOptions {
  store: AccessStore;
  policy(): AccessPolicy;
  /** `allowedPeers` count as approved. */
  allowedPeers(): string[];
  /** Our own id is always allowed (the self-test calls it). */
  isOwnId(id: string): boolean;
  /** The sender's card text and active keys when its card was fetched (self-declared, unverified). */
  describe(sender: string): { name?: string; description?: string; activeKeys: string[] } | undefined;
  /** How long a new request waits for the operator. */
  expiryMs(): number;
  /** A sender asked for the first time (the console and the tray tell the operator). */
  onNewSender?(record: PendingRecord): void;
  /** A new sender was refused because the pending list is full. */
  onFull?(): void;
  /** The pending list changed (a new ask, a count, a held task). */
  onChange?(): void;
}

const PREVIEW_CHARS = 200;

/**
 * The operator's consent for new senders (OpenClaw's DM policy words): `pairing` holds a verified sender
 * until the operator approves it, `allowlist` admits approved senders only, `open` admits anyone verified.
 * Decided in two steps (AccessCheck): what memory knows before the limits and the nonce, so a sender that
 * will be refused spends no one's rate limit (issue 15); the asking after them, so only verified senders
 * within their (strangers') limits, with a fresh nonce and a valid payload, ever reach the pending list.
 */
export class AccessGate implements AccessCheck {
  constructor(private readonly options: AccessGateOptions) {}

  precheck(request: AccessRequest): AdmissionRule | undefined {
    const rule = this.rule(request);
    if (rule) return rule;
    const { sender } = request;
    const { store } = this.options;
    if (this.options.policy() === 'allowlist') throw notApproved(sender, store.approvedRecord(sender));
    const until = store.deniedUntil(sender);
    if (until !== undefined) throw declined(sender, until);
    const pending = store.pendingOf(sender);
    if (pending) {
      // Asking again changes nothing but the count: known here, so it costs no limit and keeps its nonce.
      if (request.mode !== 'async') {
        store.askedAgain(sender);
        this.options.onChange?.();
        throw waiting(sender, pending);
      }
      if (pending.heldTasks.length >= store.maxHeldPerSender) throw tooManyHeld(sender, pending, store);
      return undefined;
    }
    if (store.pendingCount >= store.maxPending) {
      this.options.onFull?.();
      throw listFull(sender);
    }
    return undefined;
  }

  admit(request: AccessRequest, rule: AdmissionRule | undefined): AccessVerdict {
    const { sender } = request;
    const { store } = this.options;
    // An approval revoked while the limits were checked (a Redis round trip) no longer admits.
    const stands = rule !== 'approved' || store.isApproved(sender);
    if (rule && stands) {
      if (rule === 'approved') this.announce(request);
      return { admitted: true, rule };
    }
    // Undecided at the precheck: decided again, as the operator may have acted while the limits were checked.
    const now = this.rule(request);
    if (now === 'approved') this.announce(request);
    if (now) return { admitted: true, rule: now };
    if (this.options.policy() === 'allowlist') throw notApproved(sender, store.approvedRecord(sender));
    const approval = store.approvedRecord(sender);
    if (approval) {
      // Signed with a key its approval does not know: someone else may hold the id now (a released tunnel
      // address, an expired domain). It asks again, and the operator sees why.
      store.withdraw(sender);
      this.options.onChange?.();
    }
    return this.pair(request, approval ? KEY_CHANGED : undefined);
  }

  release(sender: string, taskId: string): void {
    this.options.store.release(sender, taskId);
    this.options.onChange?.();
  }

  grant(request: AccessRequest): SkillGrant {
    const open = this.options.policy() === 'open';
    const { sender } = request;
    if (request.unsigned) return { approved: false, open };
    if (this.options.isOwnId(sender)) return { approved: true, open };
    if (this.options.allowedPeers().some((peer) => normalizeAgentId(peer) === sender))
      return { approved: true, open };
    const approval = this.options.store.approvedRecord(sender);
    if (!approval || !isBound(approval, request.signedWith)) return { approved: false, open };
    return approval.skills ? { approved: true, skills: approval.skills, open } : { approved: true, open };
  }

  admitsNow(sender: string, signedWith: SigningKeys): boolean {
    return this.rule({ sender, unsigned: false, mode: 'async', payload: {}, signedWith }) !== undefined;
  }

  /** The rule that admits the sender now, if any; unsigned calls are refused unless the policy is open. */
  private rule(request: AccessRequest): AdmissionRule | undefined {
    const { sender } = request;
    const policy = this.options.policy();
    if (request.unsigned) {
      if (policy === 'open') return 'unsigned-open';
      // No identity to approve: a signature is the only way in.
      throw refuse(
        401,
        `This agent's operator approves each sender, so unsigned calls are refused: sign your envelope with a key from your agent card.`,
      );
    }
    if (this.options.isOwnId(sender)) return 'self';
    if (policy === 'open') return 'open';
    if (this.options.allowedPeers().some((peer) => normalizeAgentId(peer) === sender)) return 'allowed-peer';
    const approval = this.options.store.approvedRecord(sender);
    return approval && isBound(approval, request.signedWith) ? 'approved' : undefined;
  }

  /**
   * A key bound to the approval signed this call, now counted and with a fresh nonce (a replay announces
   * nothing): the keys its card lists as active are bound too, so a rotation made while the old key still
   * signs keeps the approval.
   */
  private announce(request: AccessRequest): void {
    const keys = this.options.describe(request.sender)?.activeKeys ?? request.signedWith?.keys ?? [];
    this.options.store.noteKeys(request.sender, keys);
  }

  // `pairing`: the sender waits on the list; an async call waits as a task.
  private pair(request: AccessRequest, note?: string): AccessVerdict {
    const { sender } = request;
    const { store } = this.options;
    const card = this.options.describe(sender);
    const asked = store.ask(
      sender,
      {
        name: oneLine(card?.name, 100),
        description: oneLine(card?.description, 300),
        preview: previewOf(request.payload),
        note,
        // What the operator's approval will be bound to: the keys this call announced.
        keys: card?.activeKeys ?? request.signedWith?.keys,
      },
      this.options.expiryMs(),
    );
    if (asked.outcome === 'full') {
      this.options.onFull?.();
      throw listFull(sender);
    }
    if (asked.outcome === 'denied') throw declined(sender, asked.until);
    const { record, isNew } = asked;
    if (isNew) this.options.onNewSender?.(record);
    this.options.onChange?.();
    if (request.mode === 'async') {
      const taskId = randomUUID();
      // A signed call has its keys; `signedWith` is absent for unsigned calls only, which never wait here.
      const signedWith = request.signedWith ?? { keys: [], pinned: false };
      if (store.hold(sender, taskId))
        return { admitted: false, held: { code: record.code, taskId, signedWith } };
      throw tooManyHeld(sender, record, store);
    }
    throw waiting(sender, record);
  }
}

/** Why an approved sender asks again (the console shows it after "It was"; `serve` prints it). */
const KEY_CHANGED =
  'approved before, but this call was signed with a key that approval does not know: someone else may hold this id now (a released tunnel address, an expired domain), or it changed keys without first signing a call with its old one. Approve it only if you expected that';

/**
 * Whether the keys that verified a call are bound to the approval: a key it knew, a key the operator pinned
 * for the id, or any key when it knows none yet (approved before any call: the first key binds).
 */
function isBound(approval: ApprovedRecord, signedWith: SigningKeys | undefined): boolean {
  if (!signedWith) return false;
  if (signedWith.pinned) return true;
  const known = approval.keys;
  if (!known || known.length === 0) return true;
  return signedWith.keys.some((key) => known.includes(key));
}

function refuse(status: 401 | 403, message: string, extra: { retryAfterSeconds?: number } = {}) {
  return new ProtocolError('AUTH_FAILED', status, message, { step: 'access', ...extra });
}

function notApproved(sender: string, approval: ApprovedRecord | undefined) {
  // Nothing to ask under the allowlist: an approval another key signs for stays as it is, for its holder.
  return refuse(
    403,
    approval
      ? `${sender} is approved with another key than the one this call is signed with; ask the operator to approve it again.`
      : `This agent accepts calls only from senders its operator approved, and ${sender} is not one: ask the operator to approve it.`,
  );
}

function declined(sender: string, until: number) {
  return refuse(
    403,
    `This agent's operator declined ${sender}; do not retry before ${new Date(until).toISOString()}.`,
  );
}

function waiting(sender: string, record: PendingRecord) {
  return refuse(
    403,
    `${sender} is not yet approved: this agent's operator approves each new sender, and your request ${record.code} waits for their approval. Retry later (the request expires at ${new Date(record.expiresAt).toISOString()}).`,
  );
}

function tooManyHeld(sender: string, record: PendingRecord, store: AccessStore) {
  return refuse(
    403,
    `${sender} already has ${store.maxHeldPerSender} tasks waiting for the operator's approval (request ${record.code}); wait for the decision before sending more.`,
  );
}

function listFull(sender: string) {
  return refuse(
    403,
    `${sender} is not yet approved, and this agent's operator has too many requests waiting to take another; retry later.`,
    { retryAfterSeconds: 3600 },
  );
}

/** The start of the first message, for the operator to judge the request by. */
function previewOf(payload: Record<string, unknown>): string | undefined {
  const text = typeof payload.message === 'string' ? payload.message : JSON.stringify(payload);
  return oneLine(text, PREVIEW_CHARS);
}
