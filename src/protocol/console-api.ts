/**
 * The operator console's HTTP API (DESIGN.md): the contract between `src/console` and `renderer/`. Pure types
 * and constants, so the renderer can import them without importing the core.
 */
import type { ErrorCode, RefusalStep } from './errors.js';
import type { SandboxBackend, SkillTemplate } from './skill-templates.js';
import type { SkillAudience, SkillLimits, SkillSetting, ToolClass, ToolClassView } from './skills.js';
import type { AgentCard, Mode } from './types.js';

/** The receive pipeline's steps in order (PROTOCOL.md §4): a refusal at one means every earlier one passed. */
export const PIPELINE_STEPS: readonly RefusalStep[] = [
  'size',
  'shape',
  'timestamp',
  'signature',
  'delegation',
  'chain',
  'trust',
  'rate-limit',
  'nonce',
  'skill',
  'input',
  'access',
  'handler',
];

export type Verdict = 'accepted' | RefusalStep;

/**
 * The A2A front door's steps in order (src/a2a): the caller's key (or the `open` policy's keyless
 * caller), the request read and decoded, the caller's limits (rate, token budget, open streams and tasks),
 * the injection screen (messages only, unless it is off), then the task: the turn run, or what was asked of
 * the task answered.
 */
export const A2A_STEPS = ['key', 'request', 'limits', 'screen', 'task'] as const;
export type A2AStep = (typeof A2A_STEPS)[number];
/** A step of either protocol's checks: SAMVAD's pipeline (PIPELINE_STEPS) or the A2A door's (A2A_STEPS). */
export type CheckStep = RefusalStep | A2AStep;

const COUNTED: readonly A2AStep[] = ['key', 'request', 'limits', 'task'];
const READ: readonly A2AStep[] = ['key', 'request', 'task'];
/**
 * The A2A steps each method runs (src/a2a/gated-handler.ts): a message runs them all; a subscription or a
 * push config written is counted against the limits but screens nothing; a read is not counted. A method
 * not listed (not known, or its body never read) may have run any of them.
 */
export const A2A_METHOD_STEPS: Readonly<Record<string, readonly A2AStep[]>> = {
  SendMessage: A2A_STEPS,
  SendStreamingMessage: A2A_STEPS,
  SubscribeToTask: COUNTED,
  CreateTaskPushNotificationConfig: COUNTED,
  DeleteTaskPushNotificationConfig: COUNTED,
  GetTask: READ,
  ListTasks: READ,
  CancelTask: READ,
  GetTaskPushNotificationConfig: READ,
  ListTaskPushNotificationConfigs: READ,
  GetExtendedAgentCard: READ,
};

/** One envelope handled, as the operator's log keeps it. Never tokens, signatures' secrets or keys. */
export interface TrafficEntry {
  /**
   * Increases by one per entry (in the order calls end), across restarts too: the history the log file kept
   * is shown again with its ids and new entries follow it. The UI's row key.
   */
  id: number;
  /** When the call started (ISO 8601), in and out alike: the console lists calls newest first by it. */
  time: string;
  endpoint: string;
  sender?: string;
  skill?: string;
  mode?: Mode;
  signatureForm: 'headers' | 'envelope' | 'both' | 'unsigned' | 'none';
  verdict: Verdict;
  code?: ErrorCode;
  status: number;
  message?: string;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  traceId?: string;
  forwardedFor?: string;
  /** Operator-facing detail of a failure (the gateway diagnosis and fix). */
  diagnosis?: string;
  taskId?: string;
  /** Only when "keep message contents" is on: truncated previews. */
  preview?: { payload?: string; reply?: string };
  /** The injection screen matched (mode `flag`: the call went on; `refuse`: refused at input). */
  screen?: { rule: string };
  /** Why the sender was let through the access policy (accepted calls only). */
  admittedBy?: AdmissionRule;
  /** An async task held (202) until the operator approves its sender. */
  held?: boolean;
  /** `out`: a call the operator's own agent made through the bridge (MCP); absent or `in`: a call to us. */
  direction?: 'in' | 'out';
  /** Outbound: the agent called (`sender` is then our own id). */
  callee?: string;
  /** Outbound: the reply's signature (absent when no reply was read). */
  replySignature?: ReplySignature;
  /** The agent a delegation token says the caller acts for (its `iss`), after the token verified. */
  onBehalfOf?: string;
  /**
   * The chain of calls between agents (docs/mcp.md "Chains of calls"): in, the one the call said it belongs
   * to (absent: it said none); out, the one the bridge sent with it.
   */
  chain?: { id: string; hop: number };
  /** The protocol the call spoke; absent: SAMVAD. */
  protocol?: 'samvad' | 'a2a';
  a2a?: A2ATrafficDetail;
  /** The key's name (A2A callers), shown beside the caller id. */
  callerName?: string;
  /**
   * An A2A call refused because its key (`sender`, `callerName`) was revoked or has expired: its holder
   * still calls with it.
   */
  keyStatus?: 'revoked' | 'expired';
  /**
   * The checks of its protocol the call passed, in the order they ran (PIPELINE_STEPS or A2A_STEPS): a step
   * not listed did not run, or did not finish. The step that refused it is its verdict (SAMVAD) or
   * `a2a.failedAt`. Absent in entries logged before the steps were recorded.
   */
  passed?: CheckStep[];
  /** The files and data the call carried (A2A file and data parts, SAMVAD chat's `attachments`). */
  files?: TrafficFile[];
}

/** A file or data part a call carried, as Traffic shows it: never its bytes. */
export interface TrafficFile {
  /** The caller's name for it, escaped to one printable line ('' when it gave none). */
  name: string;
  /** Its media type as taken (as declared, in a refused call), escaped. */
  type: string;
  /** Its size in bytes (a data part: its JSON text; an image sent by URL: as fetched, 0 until then). */
  bytes: number;
  /** An image the caller sent by URL, for the bridge to fetch. */
  fetched?: boolean;
}

/**
 * GET /api/outbound/budgets: today's calls and tokens to each agent the operator's own agent called (UTC
 * day), against the daily budgets per agent (0: no limit). `spent` names the budget a callee used up.
 */
export interface OutboundBudgetView {
  day: string;
  /** When the day's counts start again (UTC midnight), ISO 8601. */
  resetsAt: string;
  callsPerDay: number;
  tokensPerDay: number;
  callees: { callee: string; calls: number; tokens: number; spent?: 'calls' | 'tokens' }[];
}

/** What an A2A call was, for Traffic's details (protocol 'a2a' entries only). */
export interface A2ATrafficDetail {
  /**
   * The v1.0 method name as the SDK names it: SendMessage, SendStreamingMessage, GetTask, ListTasks,
   * CancelTask, SubscribeToTask, CreateTaskPushNotificationConfig, ... (v0.3 names mapped to these);
   * `unknown` for a name that is none of them. Absent when the call was refused before its body was read
   * (JSON-RPC names the method in the body, which a call refused at its key never sends through).
   */
  method?: string;
  /** The wire version the caller spoke. */
  version: '1.0' | '0.3';
  transport: 'jsonrpc' | 'rest';
  /** The task's state when the call ended, as the A2A enum names it without its prefix, lower case:
   *  submitted, working, completed, canceled, failed, rejected, input-required, auth-required. */
  taskState?: string;
  /** The caller's conversation. */
  contextId?: string;
  /** The step that refused or failed the call (its verdict names SAMVAD's equivalent, for the filters). */
  failedAt?: A2AStep;
}

/**
 * A called agent's reply: signed and checked against its card (`verified`), carrying no signature as the
 * protocol's own SDKs answer (`unsigned`: accepted unless outboundRequireSignedReplies), or signed with a
 * signature that did not check (`failed`: discarded).
 */
export type ReplySignature = 'verified' | 'unsigned' | 'failed';

/** Who may reach the gateway (OpenClaw's own words for DMs from strangers). */
export type AccessPolicy = 'pairing' | 'allowlist' | 'open';

/** Which rule let a verified sender through: the framing tells the gateway too. */
export type AdmissionRule = 'approved' | 'allowed-peer' | 'self' | 'open' | 'unsigned-open';

/** A verified sender that waits for the operator's approval (policy `pairing`). */
export interface PendingSenderView {
  sender: string;
  /** Short code the caller was given, so the operator can match a request they were told about. */
  code: string;
  /** From the sender's card when it was fetched (self-declared, unverified text). */
  name?: string;
  description?: string;
  firstAt: string;
  lastAt: string;
  /** How many times it asked (refused or held calls). */
  count: number;
  /** The start of its first message; kept only while pending. */
  preview?: string;
  /** Async tasks held until the operator decides. */
  heldTasks: number;
  /** Why it asks again though it was approved before (its card's keys changed). */
  note?: string;
  expiresAt: string;
}

export interface ApprovedSenderView {
  sender: string;
  /** `operator`: approved in the console (revocable); `allowed-peers`: from the allowedPeers setting. */
  source: 'operator' | 'allowed-peers';
  approvedAt?: string;
  name?: string;
  /** The skills the approval opens, exactly (a named skill included); absent: every public and approved skill. */
  skills?: string[];
}

/**
 * POST /api/access/approve: `sender`, and `skills` to scope the approval to exactly those skills (absent:
 * every public and approved skill). Approving an approved sender again changes its scope, nothing else.
 */
export interface AccessApproveRequest {
  sender: string;
  skills?: string[];
}

/** GET /api/access */
export interface AccessResponse {
  policy: AccessPolicy;
  pending: PendingSenderView[];
  approved: ApprovedSenderView[];
  limits: { maxPending: number; maxHeldPerSender: number; expiryHours: number };
  /** New senders refused since start because the pending list was full. */
  refusedWhileFull: number;
}

/** POST /api/access/approve|deny|revoke answer. */
export interface AccessChangeResponse extends AccessResponse {
  /** Held tasks that the decision started (approve) or failed (deny). */
  tasks: number;
}

/** An A2A key's own limits; each one not set is the per-sender default (settings `perSender`, `tokensPerDay`). */
export interface A2AKeyLimits {
  requestsPerMinute?: number;
  tokensPerDay?: number;
}

/** An A2A key as the console lists it: never its secret, nor the hash kept of it. */
export interface A2AKeyView {
  /** The key's short id (not secret): it is also in the key itself, `abk_<id>_...`. */
  id: string;
  /** The agent the operator issued it for. */
  name: string;
  /** `a2a-key:<id>`: the caller as traffic, access lists, limits, budget and sessions name it. */
  caller: string;
  createdAt: string;
  expiresAt?: string;
  limits: A2AKeyLimits;
  lastUsedAt?: string;
  /** Requests that presented the key and were let through. */
  calls: number;
  revokedAt?: string;
  status: 'active' | 'expired' | 'revoked';
  /**
   * The skills the key opens, exactly (a named skill included); absent: every public and approved skill
   * (src/protocol/skills.ts, SkillAudience).
   */
  skills?: string[];
}

/** GET /api/a2a/keys (newest first). */
export interface A2AKeysResponse {
  keys: A2AKeyView[];
  /** The per-sender limits a key without its own gets. */
  defaults: { requestsPerMinute: number; tokensPerDay: number };
}

/** POST /api/a2a/keys body. */
export interface A2AKeyIssueRequest {
  /** One line, 1 to 100 characters. */
  name: string;
  /** ISO 8601, in the future; none: the key never expires. */
  expiresAt?: string;
  limits?: A2AKeyLimits;
  /** The skill ids the key opens, exactly; none: every public and approved skill. */
  skills?: string[];
}

/** POST /api/a2a/keys answer (201): the only answer that ever holds the key itself. */
export interface A2AKeyIssueResponse extends A2AKeysResponse {
  key: A2AKeyView;
  /** The key (`abk_...`), sent as `Authorization: Bearer <secret>`. Shown once: only its hash is kept. */
  secret: string;
}

/** POST /api/a2a/keys/:id/revoke answer. */
export interface A2AKeyRevokeResponse extends A2AKeysResponse {
  key: A2AKeyView;
}

/**
 * An A2A caller without a key that knocked (policy `pairing`, docs/a2a.md "A stranger knocks"): its message
 * waits, as a task in TASK_STATE_AUTH_REQUIRED, for the operator to approve it (an A2A key is issued for it,
 * and its message runs) or deny it. Every text in it is the caller's, unverified, escaped and bounded.
 */
export interface KnockView {
  /** Short code (XXXX-XXXX) the caller was told, so the operator can match a knock they heard of. */
  code: string;
  /** Where it called from: an IP address (IPv6: its /64), or `this machine`. */
  address: string;
  /**
   * `proxy`: the address a tunnel or proxy on this machine forwarded (its last X-Forwarded-For hop); `direct`:
   * the connection's own; `local`: a process on this machine, no address forwarded.
   */
  via: 'proxy' | 'direct' | 'local';
  /** The skill whose door it knocked at (the agent's own: `chat`). */
  skill: string;
  /** What the caller says it is (its message's metadata `agentName`, `agentCardUrl`): claimed, not checked. */
  claimed: { name?: string; cardUrl?: string };
  /** The start of its first message, as sent: hidden characters escaped (`\n`, `\u202e`), cut. */
  preview: string;
  /** The injection screen matched one of its messages (`flag`): the rule. */
  screened?: { rule: string };
  /** Messages waiting (the first, and follow-ups to its task). */
  messages: number;
  firstAt: string;
  lastAt: string;
  expiresAt: string;
  /** The key name the console proposes (editable): from its claimed name and address. */
  suggestedName: string;
}

/** A skill a knock's key can be scoped to (chat and the published skills, paused ones too). */
export interface KnockSkillOption {
  id: string;
  name: string;
  audience: SkillAudience;
}

/** How many knocks wait, and the newest (its name: claimed by the caller). */
export interface KnocksSummary {
  waiting: number;
  newest?: Pick<KnockView, 'code' | 'address' | 'firstAt'> & { name?: string };
}

/** GET /api/a2a/knocks */
export interface KnocksResponse {
  policy: AccessPolicy;
  /**
   * Whether keyless callers can knock now: under `pairing`, without replicas (the knock list is kept in the
   * data dir, not yet shared on Redis). False: they are refused (401) as before.
   */
  available: boolean;
  /** Newest first. */
  knocks: KnockView[];
  limits: { maxWaiting: number; maxPerAddress: number; expiryHours: number };
  /** Knocks refused since start: the list full, an address at its bound, or one you turned down. */
  refused: number;
  skills: KnockSkillOption[];
  /** The per-sender limits a key without its own gets. */
  defaults: { requestsPerMinute: number; tokensPerDay: number };
}

/**
 * POST /api/a2a/knocks/:code/approve: the key issued for the caller, as POST /api/a2a/keys takes it (`name`
 * defaults to the knock's `suggestedName`; `skills` absent: every public and approved skill).
 */
export type KnockApproveRequest = Partial<A2AKeyIssueRequest>;

/**
 * The answer: the key issued (never the key itself: its caller reads it, once, in its task) and the list.
 */
export interface KnockApproveResponse extends KnocksResponse {
  key: A2AKeyView;
}

/** POST /api/a2a/knocks/:code/deny: why, in one line (the caller reads it in its task). */
export interface KnockDenyRequest {
  reason?: string;
}

/** The target agent on the gateway and what it can reach (the bridge's security boundary). */
export interface GatewayAgentView {
  /** The agent id callers reach (`gatewayAgent`), or undefined when an explicit model is set. */
  id?: string;
  /** What is sent as `model`. */
  model: string;
  /** From `GET /v1/models`: present, missing, unknown (could not check), skipped (explicit model). */
  check: 'present' | 'missing' | 'unknown' | 'skipped' | 'checking';
  checkedAt?: string;
  /** Agents the gateway lists (ids, without the `openclaw/` prefix), when known. */
  available?: string[];
  /** Why the check could not decide, when `unknown`. */
  detail?: string;
  /** The tool policy of the target agent, from the gateway's config file when readable. */
  tools: ToolExposureView;
  /** A config snippet that adds a restricted agent with this id (shown when missing or exposing). */
  snippet: string;
  /**
   * Only for an agent that exposes host tools: callers are served once the operator accepted this agent with
   * exactly these tools (`accepted`); before that (`needed`), or after its tools changed (`changed`: the
   * tools accepted then), they are refused as for a missing agent.
   */
  acceptance?:
    | { state: 'accepted'; at: string }
    | { state: 'needed' }
    | { state: 'changed'; tools: string[]; at: string };
}

/** POST /api/gateway/check, /accept and /withdraw: the agent for callers and the gateway, as they are now. */
export interface GatewayCheckResponse {
  agent: GatewayAgentView;
  gateway: GatewayView;
  /**
   * Check only (answered 202): the probe had not ended when the console answered, so a slow gateway never
   * leaves the request without an answer. It goes on: POST again to wait for it (a second POST joins the
   * same probe), or read the status after the `gateway` state event. `waitingFor`: the requests to the
   * gateway not answered yet ("GET /health", "GET /v1/models").
   */
  checking?: { since: string; waitingFor: string[] };
}

/** The setting `acceptedExposedAgent`: the operator let callers reach this agent with these tools. */
export interface AcceptedExposedAgent {
  /** The agent id (or the explicit model) callers reach. */
  agent: string;
  tools: string[];
  at: string;
}

export type ToolExposureView =
  | { verdict: 'restricted'; detail: string }
  | { verdict: 'exposes-host-tools'; tools: string[]; detail: string }
  | {
      verdict: 'unknown';
      detail: string;
      /** The config file is not what the gateway runs (how they differ): callers are refused meanwhile. */
      notLoaded?: string;
    };

export type TunnelStatus =
  | { status: 'off' }
  | { status: 'connecting'; attempt: number }
  | { status: 'online'; url: string; since: string; reachability?: TunnelReachability }
  | {
      status: 'reconnecting';
      attempt: number;
      nextTryAt: string;
      lastError: string;
      /** What the operator can do about it, when known (a tunnel server that cannot be reached at all). */
      hint?: string;
      /** The name asked for again at each try, until the server lets go of the old connection's hold. */
      keepingName?: string;
    }
  | { status: 'failed'; reason: string };

/**
 * What the reachability check measured: a call through the public URL for this agent's own card (see
 * tunnel/reachability.ts). A connected tunnel client is not a reachable agent: this is what says so.
 */
export interface TunnelReachability {
  /** `checking` until the first check through this address ends; then what the last one found. */
  state: 'checking' | 'reachable' | 'unreachable';
  /** When the last check ended (ISO 8601). */
  checkedAt?: string;
  /** Why the last check failed, in words the operator can act on. */
  problem?: string;
}

/** /agent/health's `publicAddress`: the reachability check's last finding, or `none` without a tunnel. */
export type PublicAddressHealth = TunnelReachability['state'] | 'none';

/**
 * The agent's public address changed, and with it its id (`agent://<host>`): approvals other agents gave
 * the old id no longer apply to it. POST /api/tunnel/address-change/dismiss forgets it.
 */
export interface AddressChangeView {
  /** The address just before this change. */
  previous: string;
  url: string;
  /** When the new address came up. */
  at: string;
  /** Why, when known (the name asked for was not given). */
  note?: string;
  /** Changes since the operator last dismissed one, this one included; absent: 1. */
  changes?: number;
  /** With more than one change: the address the operator last knew, before the first of them. */
  known?: string;
}

/**
 * A stable-address provider offered as a preset of the `command` tunnel (src/tunnel/presets.ts). The console
 * may set the command only through a preset (POST /api/tunnel/preset): it never runs a command line it chose.
 */
export interface TunnelPresetView {
  id: string;
  label: string;
  /** What it needs before it works, in a sentence or two. */
  needs: string;
  /** The command line, `{port}` left for the agent and `{<field>}` for each field below. */
  command: string;
  fields: { name: string; label: string; placeholder: string; help: string; pattern: string }[];
}

/** POST /api/tunnel/preset */
export interface TunnelPresetRequest {
  id: string;
  values: Record<string, string>;
}

export interface RegistryRecordView {
  registry: string;
  url: string;
  id: string;
  name: string;
  registeredAt: string;
}

export interface ProblemView {
  message: string;
  fix: string;
  at: string;
  /**
   * `unreachable`: the public URL did not reach this agent, so no registry was asked; the console then gives
   * the advice that follows what the tunnel's check measures since (reachable now, still not, reconnecting).
   */
  cause?: 'unreachable';
}

export type RegistryStatus =
  | { status: 'unregistered'; lastError?: ProblemView }
  | { status: 'registering'; url: string }
  | { status: 'registered'; record: RegistryRecordView; lastError?: ProblemView };

/**
 * The gateway in one word, the latest of health probes and chat calls (src/bridge/gateway-state.ts): `up`,
 * `down` (not answering), `token-wrong` (refuses the bridge's token, or locks it out), `agent-missing` (no
 * agent for callers), `failing` (answers, but a chat call failed), `unknown` (not checked yet), or
 * `not-configured`.
 */
export type GatewayCondition =
  'up' | 'down' | 'token-wrong' | 'agent-missing' | 'failing' | 'unknown' | 'not-configured';

export interface GatewayView {
  /** `configured`, `missing GATEWAY_URL` or `missing GATEWAY_TOKEN`. */
  status: string;
  condition: GatewayCondition;
  /** When the condition began. */
  since: string;
  /** Shown to the operator only (the console is loopback and token-protected); the token never is. */
  url: string;
  model: string;
  /** From the last health probe (`GET /health`); undefined before the first. */
  live?: boolean;
  checkedAt?: string;
  /** What is wrong now (every condition but up and unknown), with its fix. */
  problem?: { kind: string; diagnosis: string; fix: string; at: string };
  /** The last chat call's outcome (a newer probe may have cleared its problem). */
  lastCallOk?: boolean;
  agent: GatewayAgentView;
}

export interface KeyView {
  kid: string;
  publicKey: string;
  createdAt: string;
  active: boolean;
  signing: boolean;
  retiredAt?: string;
  inactiveFrom?: string;
}

export interface TrafficMinute {
  /** ISO time of the minute's start. */
  minute: string;
  accepted: number;
  refused: number;
}

/** The MCP server the operator's own agent calls other agents through (GET /api/status): never its token. */
export interface McpStatusView {
  /** `http://127.0.0.1:<console port>/mcp` */
  url: string;
  /** The console could not take its configured port this run, so the URL is not the usual one (that one). */
  movedFrom?: string;
  /** Whether the gateway's config lists this URL under `mcp.servers`; absent when the config cannot be read. */
  listedInGatewayConfig?: boolean;
  /** What is wrong with that entry (or why none matches), and what to do. */
  gatewayConfigProblem?: string;
  /** Which agents the operator's agent may call (setting `outbound`). */
  outbound: 'any' | 'allowlist' | 'off';
  /** How OpenClaw's tool policy names this server's tools (`agent-bridge__*`). */
  toolGlob: string;
  /** JSON5 that denies these tools to the agent strangers reach (`gatewayAgent`). */
  policySnippet: string;
}

/** How a credential goes to an A2A agent: `Authorization: Bearer <value>`, or `<header>: <value>`. */
export type OutboundCredentialScheme = 'bearer' | 'apiKey';

/** A credential the bridge sends to one A2A agent for the operator's agent: never its value. */
export interface OutboundCredentialView {
  /** The agent's origin (`https://host[:port]`): the credential goes with requests to exactly this origin. */
  url: string;
  scheme: OutboundCredentialScheme;
  /** With `apiKey`: the header it goes in. */
  header?: string;
  addedAt: string;
}

/** GET /api/outbound/credentials, and the answer to each change. */
export interface OutboundCredentialsResponse {
  credentials: OutboundCredentialView[];
  /** The file could not be read (none of it is used meanwhile), and what to do. */
  problem?: string;
}

/**
 * POST /api/outbound/credentials: keeps the credential for `url` (replacing the one it had). The value is
 * write-only: no answer, log or view ever holds it. POST /api/outbound/credentials/remove takes `{url}`.
 */
export interface OutboundCredentialRequest {
  url: string;
  scheme: OutboundCredentialScheme;
  header?: string;
  value: string;
}

/** GET /api/mcp and POST /api/mcp/token: what connecting OpenClaw needs, the token included. */
export interface McpResponse {
  url: string;
  token: string;
  /** `<data dir>/mcp.json` (0600), which holds the URL and the token for scripts. */
  file: string;
  /** The name under the gateway's `mcp.servers`. */
  serverName: string;
  /** `openclaw mcp add ...`, ready to paste (it carries the token). */
  command: string;
  /** `openclaw mcp set ...`: replaces the entry after a new token or a new address. */
  updateCommand: string;
}

/** A skill's OpenClaw agent as the bridge checked it: listed by the gateway (GET /v1/models) or not. */
export interface SkillAgentCheck {
  /** The OpenClaw agent id. */
  agent: string;
  /** What is sent as `model`: `openclaw/<agent>`. */
  model: string;
  /** `checking` until the gateway's agent list was first asked; `unknown` when it could not be. */
  check: 'present' | 'missing' | 'unknown' | 'checking';
  checkedAt?: string;
  /** Agents the gateway lists (without `openclaw/`), when known. */
  available?: string[];
  /** Why the check could not decide, when `unknown`. */
  detail?: string;
  /** The config file is not what the gateway runs (how they differ): the skill does not serve meanwhile. */
  notLoaded?: string;
}

/**
 * Why a skill does not serve now: paused; its agent is missing, or its config file is not what the gateway
 * runs; its tools are wider than its audience may reach (WIDEST_CLASS); it reaches the host and the operator
 * has not accepted it with exactly these tools (or did, with others).
 */
export type SkillNotServing =
  'paused' | 'agent-missing' | 'unverified' | 'audience' | 'acceptance-needed' | 'tools-changed';

export type SkillServing =
  { serving: true } | { serving: false; reason: SkillNotServing; message: string; fix: string };

/** One skill on the Skills page: its setting, its agent, its tools, whether it serves, its use today. */
export interface SkillView {
  setting: SkillSetting;
  /** `chat`: built in, on the `gatewayAgent` setting; changed in Settings, never removed. */
  builtIn: boolean;
  agent: SkillAgentCheck;
  /** Its agent's tool class, the tools behind it, and why (src/bridge/tool-class.ts). */
  tools: ToolClassView;
  /** The widest class its audience may reach (WIDEST_CLASS). */
  widest: ToolClass;
  /**
   * A `host` skill only: served once the operator accepted it with exactly its tools now (`accepted`);
   * before that (`needed`), or after its tools changed (`changed`: the tools accepted then), not.
   */
  acceptance?:
    | { state: 'accepted'; at: string }
    | { state: 'needed' }
    | { state: 'changed'; tools: string[]; at: string };
  serving: SkillServing;
  /** Per caller, as they apply: its own limits, else the per-sender settings. */
  limits: Required<SkillLimits>;
  /** Turns run and tokens they cost since UTC midnight, counted at this replica since it started. */
  today: { calls: number; tokens: number };
  /**
   * Where A2A callers pick it: its own card (chat: the agent's card), null while the agent has no public
   * address. SAMVAD callers name it in the envelope's `skill`.
   */
  a2aCardUrl: string | null;
}

/** GET /api/skills (chat first, then the skills setting's order), and every answer that changes them. */
export interface SkillsResponse {
  skills: SkillView[];
  /** The per-sender limits a skill without its own gets. */
  defaults: Required<SkillLimits>;
}

/**
 * POST /api/skills: a new skill. `examples`, `limits`, `paused` and `sandboxNetwork` may be left out (none,
 * the per-sender defaults, published, no network). Refused (409) when its agent's tools are wider than its
 * audience may reach.
 */
export interface SkillAddRequest {
  id: string;
  name: string;
  description: string;
  examples?: string[];
  agent: string;
  audience: SkillAudience;
  limits?: SkillLimits;
  paused?: boolean;
  sandboxNetwork?: boolean;
}

/** PUT /api/skills/:id: the fields to change (`paused: true` pauses it); its id and acceptance are not. */
export type SkillEditRequest = Partial<Omit<SkillAddRequest, 'id'>>;

/** POST /api/skills/:id/accept: the tools the operator saw and accepts (exactly the skill's tools now). */
export interface SkillAcceptRequest {
  tools: string[];
}

/**
 * POST /api/skills/snippet: the OpenClaw config for a new skill's agent from a template (none for `custom`,
 * an agent the operator has), fitted to the roster of the operator's config file; asked again, it says what
 * the agent is now ("Check again" once the operator merged it).
 */
export interface SkillSnippetRequest {
  template: SkillTemplate;
  /** The OpenClaw agent id: a new one for a template (the skill's id, say), an existing one for `custom`. */
  agent: string;
  /** `sandboxed`: the skill lets its sandbox reach the network (the snippet opens it; the check allows it). */
  sandboxNetwork?: boolean;
  /** `sandboxed`: the container runtime the snippet names (default docker). */
  backend?: SandboxBackend;
}

/**
 * What the agent is now beside what the template intends:
 * - `not-applied`: the config file has no such agent (yet);
 * - `not-loaded`: the file has it, the gateway does not run it (not reloaded, or a config it refuses);
 * - `as-intended`: the template's class; `defeated`: another class, the operator's own config decided it
 *   (the message says which setting, in the classifier's words);
 * - `classified`: `custom`, its class as it is;
 * - `unknown`: the file cannot be read here (a gateway on another machine, no file).
 */
export interface SkillSnippetOutcome {
  state: 'not-applied' | 'not-loaded' | 'as-intended' | 'defeated' | 'classified' | 'unknown';
  message: string;
}

export interface SkillSnippetResponse {
  template: SkillTemplate;
  /** The agent id as OpenClaw writes it (lower case): what the skill's `agent` must be. */
  agent: string;
  /** JSON5 to merge into `mergeInto`; absent for `custom`. */
  snippet?: string;
  /** The class the template gives its agent; absent for `custom`. */
  expectedClass?: ToolClass;
  /** The OpenClaw config file to merge it into. */
  mergeInto: string;
  /** Fitted to the file's roster, or to a stock one when the file cannot be read here (`rosterNote`: why). */
  roster: 'file' | 'stock';
  rosterNote?: string;
  /** The file declares this agent already (a template then changes its tools; merge with care). */
  declared: boolean;
  /** The agent on the gateway (its list asked now) and its class from the file read now. */
  agentCheck: SkillAgentCheck;
  tools: ToolClassView;
  outcome: SkillSnippetOutcome;
}

/** GET /api/status */
export interface StatusResponse {
  agent: {
    id: string;
    url: string;
    localUrl: string;
    version: string;
    protocolVersion: string;
    uptimeSeconds: number;
    health: 'ok' | 'degraded';
    activeRequests: number;
    queuedTasks: number;
    card: AgentCard;
  };
  gateway: GatewayView;
  tunnel: TunnelStatus & {
    provider: 'localtunnel' | 'command' | 'none';
    /** The tunnel came back at another address than before (this run or the last): shown until dismissed. */
    addressChange?: AddressChangeView;
  };
  /** `registryUrl`: where a registration goes now (the setting), said before the operator registers. */
  registry: RegistryStatus & { registryUrl?: string };
  keys: KeyView[];
  /** The last 15 minutes, oldest first, and totals since start. */
  traffic: { perMinute: TrafficMinute[]; accepted: number; refused: number };
  /** Settings changed in the console that only take effect after a restart. */
  restartNeeded: string[];
  /** The access policy, how many senders wait, and the newest of them (the tray's notification). */
  access: {
    policy: AccessPolicy;
    pending: number;
    newest?: Pick<PendingSenderView, 'sender' | 'name' | 'code' | 'firstAt'>;
    /**
     * A2A callers without a key that knocked and wait, and the newest of them (the tray's notification). The
     * console always sends it; optional for readers of a core from before knocks.
     */
    knocks?: KnocksSummary;
  };
  mcp: McpStatusView;
  /**
   * Where shared state lives: the data dir (one process), or Redis (replicas). While Redis does not answer,
   * `up` is false, calls are refused with 503, and `problem` says why and what to do.
   */
  state: { backend: 'data-dir' | 'redis'; up: boolean; problem?: string };
  /**
   * The A2A agent card's address (null while there is no public address) and the live A2A keys: null, with
   * `keysProblem` saying why, while the key store cannot be read (then no key works either).
   */
  a2a: { cardUrl: string | null; keys: number | null; keysProblem?: string };
  /** Present in a demo run (`serve --demo`): a stand-in gateway answers, no model (the console says so). */
  demo?: true;
  /** Published skills (not paused), chat included; how many are public; how many do not serve now. */
  skills: { published: number; public: number; notServing: number };
}

/** GET /api/events (SSE): `event: envelope` with a TrafficEntry; `event: state` when anything in the status changed. */
export interface StateEvent {
  kind:
    'agent' | 'gateway' | 'tunnel' | 'registry' | 'keys' | 'settings' | 'access' | 'mcp' | 'state' | 'skills';
}

/** GET /api/events: `event: access` when a new sender asks (policy `pairing`). */
export interface AccessEvent {
  kind: 'new-sender';
  pending: PendingSenderView;
}

/** GET /api/traffic?direction=&sender=&skill=&verdict=&status=&text=&limit= (newest first). */
export interface TrafficResponse {
  entries: TrafficEntry[];
  /** How many entries the log holds in memory in all. */
  total: number;
}

export interface TrafficFilter {
  /** `in` (calls to this agent) or `out` (calls the operator's agent made through the bridge). */
  direction?: 'in' | 'out';
  /** `samvad` (entries without a protocol too) or `a2a`. */
  protocol?: 'samvad' | 'a2a';
  sender?: string;
  skill?: string;
  /** `accepted`, `refused`, or a pipeline step. */
  verdict?: string;
  /** An HTTP status, or a class like `4xx`. */
  status?: string;
  /** Matched case-insensitively against sender, caller name, callee, skill, code, message, traceId and diagnosis. */
  text?: string;
}

/** Every /api error: what happened and what to do. */
export interface ApiError {
  error: { message: string; fix?: string; fields?: { field: string; message: string }[] };
}

/**
 * Where a setting's value in use comes from: its default, settings.json (also what the console saves), a flag
 * or an environment variable given for this run, or OpenClaw's own config (the gateway's address and token).
 */
export type SettingSource = 'default' | 'settings' | 'flag' | 'env' | 'openclaw.json';

export interface SettingSourceView {
  source: SettingSource;
  /** The flag or variable that set it (`--rpm`, `GATEWAY_URL`), or the file it was read from. */
  from?: string;
  /** The value in use when the setting itself is not set and another place supplies it; never a secret. */
  value?: unknown;
  /** Saved in the console over a flag or variable of this run: that one applies again at the next start. */
  overridesAtStart?: string;
}

/** Settings as the console shows them: secrets only as set / not set, and where every value comes from. */
export interface SettingsResponse {
  settings: Record<string, unknown>;
  /** One for every setting, secrets included (their source only). */
  sources: Record<string, SettingSourceView>;
  /** In use or not (from any source, OpenClaw's config included), never the value. */
  secrets: { gatewayToken: { set: boolean }; bearerTokens: { count: number } };
  restartNeeded: string[];
  /**
   * Settings the console shows but may not change (a command the agent runs): set with their flag or in
   * settings.json on the machine. A PUT that changes one gets 403 with a field error.
   */
  readOnly: string[];
  /** Stable-address presets of the `command` tunnel, to set through POST /api/tunnel/preset. */
  tunnelPresets: TunnelPresetView[];
}

/** POST /api/console/token: the console's new token (the old one no longer works) and the file that keeps it. */
export interface ConsoleTokenResponse {
  token: string;
  file: string;
}

/** PUT /api/settings answer. */
export interface SettingsUpdateResponse extends SettingsResponse {
  /** Settings that took effect at once. */
  applied: string[];
}

export interface SelfTestStageView {
  name: 'resolve' | 'card' | 'signature' | 'gateway' | 'reply-signature';
  label: string;
  ok: boolean;
  detail: string;
  /** A failed stage: what to do about it. */
  fix?: string;
  ms: number;
}

/** POST /api/selftest */
export interface SelfTestResponse {
  ok: boolean;
  url: string;
  stages: SelfTestStageView[];
  totalMs: number;
}
