/**
 * The settings form's model: which settings the console edits, how each shows in a form, and the change
 * set a save sends (only what changed; secrets only when a new value was typed; never a read-only setting).
 */
import type { FieldError } from '../api/client';
import type { HelpReference } from '../help/docs';
import type { SettingSourceView } from '../api/contract';

export type FieldKind = 'text' | 'url' | 'number' | 'select' | 'list' | 'textarea' | 'boolean';

export interface SettingField {
  /** The setting's name in the store (src/settings/schema.ts), as `error.fields[].field` names it. */
  name: string;
  label: string;
  kind: FieldKind;
  help?: string;
  placeholder?: string;
  options?: readonly { value: string; label: string }[];
  /** May be "not set": emptying it sends null (back to not set). */
  optional?: boolean;
  /** Numbers: the range the core accepts (checked before sending). */
  min?: number;
  max?: number;
  /** Text: at most this many characters (checked before sending). */
  maxLength?: number;
  /** Text areas: visible lines. */
  rows?: number;
  /** The console shows the value with its password masked as `***` (sending `***` back keeps it). */
  maskedPassword?: boolean;
  /**
   * Kept in milliseconds, edited in seconds: every timeout the operator sees is in seconds, as the flags
   * take them (`min`/`max` are seconds too).
   */
  msAsSeconds?: boolean;
  /** Read when the agent starts (its ports and address): a change saved here applies after a restart. */
  restart?: boolean;
}

export interface SettingSection {
  id: string;
  title: string;
  description?: string;
  /** Where docs/settings.md lists this section's settings, flags and defaults. */
  help: HelpReference;
  fields: SettingField[];
}

export const SECTIONS: SettingSection[] = [
  {
    id: 'gateway',
    title: 'Gateway',
    help: 'docs/settings.md#gateway',
    description: 'Your OpenClaw gateway: every chat message is forwarded to it.',
    fields: [
      {
        name: 'gatewayUrl',
        label: 'Gateway URL',
        kind: 'url',
        optional: true,
        maskedPassword: true,
        help: 'Empty: from the environment (`GATEWAY_URL`), else from OpenClaw’s own config, else `http://127.0.0.1:18789`.',
      },
      {
        name: 'gatewayAgent',
        label: 'Agent for callers',
        kind: 'text',
        placeholder: 'public',
        help: 'The OpenClaw agent that strangers reach (the bridge sends `model: "openclaw/<id>"`). Keep it restricted: no shell, no files (`tools.profile: "minimal"` with the host tools denied), never your own main agent.',
      },
      {
        name: 'gatewayModel',
        label: 'Model',
        kind: 'text',
        optional: true,
        help: 'Leave empty for OpenClaw (the bridge asks for `openclaw/<agent for callers>`). Set it only for a gateway that is not OpenClaw: with an explicit model the bridge cannot check that the agent exists or which tools it has, and does not stop calls to a missing agent.',
      },
      {
        name: 'gatewayTimeoutMs',
        label: 'Timeout (seconds)',
        kind: 'number',
        msAsSeconds: true,
        min: 0.1,
        max: 3600,
        help: 'How long one chat call may take (and the longest silence in a stream).',
      },
      {
        name: 'callerInstructions',
        label: 'Instructions about callers',
        kind: 'textarea',
        rows: 5,
        maxLength: 4000,
        help: 'Your words to the gateway agent about callers, sent in the system message of every call (up to 4000 characters). The bridge already tells it who is calling, how the caller was admitted, and that the message is untrusted text.',
      },
      {
        name: 'injectionScreen',
        label: 'Injection screen',
        kind: 'select',
        options: [
          { value: 'flag', label: 'Flag (log it, warn the agent)' },
          { value: 'refuse', label: 'Refuse (INJECTION_DETECTED)' },
          { value: 'off', label: 'Off' },
        ],
        help: 'Spots blunt prompt-injection phrasings (“ignore all previous instructions”): Flag marks the call in the log and warns the agent; Refuse turns it away. Such screens are easy to evade (paraphrase, other languages, encodings): the restricted agent for callers is the real defence.',
      },
    ],
  },
  {
    id: 'tunnel',
    title: 'Tunnel',
    help: 'docs/settings.md#tunnel',
    description: 'How the agent gets its public HTTPS address.',
    fields: [
      {
        name: 'tunnel',
        label: 'Provider',
        kind: 'select',
        options: [
          { value: 'localtunnel', label: 'localtunnel' },
          { value: 'command', label: 'Command (your own tunnel program)' },
          { value: 'none', label: 'None (public URL set by hand, or local only)' },
        ],
      },
      { name: 'tunnelHost', label: 'Tunnel server', kind: 'url', help: 'localtunnel only.' },
      {
        name: 'subdomain',
        label: 'Subdomain',
        kind: 'text',
        optional: true,
        help: 'localtunnel only: ask for this name (not guaranteed).',
      },
      {
        name: 'publicUrl',
        label: 'Public URL',
        kind: 'url',
        optional: true,
        placeholder: 'https://agent.example.com',
        help: 'With provider None: the https:// address callers reach this agent at (your own proxy’s), which makes its id. With a tunnel, the tunnel’s address is used instead.',
      },
      {
        name: 'tunnelCommand',
        label: 'Command',
        kind: 'text',
        optional: true,
        placeholder: 'cloudflared tunnel --url http://127.0.0.1:8787',
        help: 'Command provider only: started and supervised by the agent.',
      },
      {
        name: 'tunnelUrlPattern',
        label: 'URL pattern',
        kind: 'text',
        help: 'Command provider only: a regular expression that finds the public URL in its output.',
      },
    ],
  },
  {
    id: 'card',
    title: 'Agent card',
    help: 'docs/settings.md#agent-card',
    description: 'What other agents and the registry see.',
    fields: [
      { name: 'agentName', label: 'Name', kind: 'text' },
      { name: 'agentDescription', label: 'Description', kind: 'textarea' },
      { name: 'specializations', label: 'Specializations', kind: 'list', help: 'One per line.' },
      {
        name: 'cardTTL',
        label: 'Card lifetime (seconds)',
        kind: 'number',
        min: 0,
        max: 86400,
        help: 'How long callers may keep the card before fetching it again; after a key rotation the old key keeps verifying this long.',
      },
    ],
  },
  {
    id: 'registry',
    title: 'Registry',
    help: 'docs/settings.md#registry',
    description: 'Where Register (on the Registry page) lists this agent, so other agents find it by name.',
    fields: [
      {
        name: 'registryUrl',
        label: 'Registry URL',
        kind: 'url',
        help: 'The registry the next registration goes to; the agent stays listed where it registered before.',
      },
    ],
  },
  {
    id: 'access',
    title: 'Access',
    help: 'docs/settings.md#access',
    description: 'Who may call the chat skill. Approve and deny senders on the Access page.',
    fields: [
      {
        name: 'access',
        label: 'Access policy',
        kind: 'select',
        options: [
          { value: 'pairing', label: 'Pairing (you approve each new sender)' },
          { value: 'allowlist', label: 'Allowlist (approved senders only)' },
          { value: 'open', label: 'Open (anyone who can sign)' },
        ],
        help: 'Who reaches the gateway agent. With open, any agent with a valid signature gets through without asking you.',
      },
      {
        name: 'pendingExpiryHours',
        label: 'Request expiry (hours)',
        kind: 'number',
        min: 1,
        max: 720,
        help: 'How long a new sender’s request waits for you (1 to 720 hours); then it expires and its held tasks fail.',
      },
      {
        name: 'chatTrust',
        label: 'Chat skill trust',
        kind: 'select',
        options: [
          { value: 'public', label: 'Public: any agent with a valid signature' },
          { value: 'authenticated', label: 'Authenticated: callers must send a bearer token' },
          { value: 'trusted-peers', label: 'Trusted peers: only the allowed peers below' },
        ],
      },
      {
        name: 'allowUnsigned',
        label: 'Accept unsigned calls',
        kind: 'boolean',
        help: 'Lets callers that sign nothing call public skills (rate-limited per address; off by default). They prove no identity: the access policy cannot tell them apart.',
      },
      {
        name: 'fetchImageUrls',
        label: 'Fetch images sent by URL',
        kind: 'boolean',
        help: 'Off by default: callers send images inline. On, the agent fetches an image a caller names by URL (public https addresses only, as for push notifications; at most 10 MB and 10 s each) and passes it to your gateway.',
      },
      {
        name: 'allowedPeers',
        label: 'Allowed peers',
        kind: 'list',
        placeholder: 'agent://friend.example.com',
        help: 'One agent id per line; used with “Trusted peers”. They are always let in by the access policy, without approval.',
      },
      {
        name: 'delegationMaxLifetimeSeconds',
        label: 'Longest delegation token (seconds)',
        kind: 'number',
        min: 60,
        max: 2592000,
        help: 'A caller acting for another agent shows that agent’s delegation token; one made to last longer than this (86400 = 24 h) is refused, since it could never be withdrawn.',
      },
    ],
  },
  {
    id: 'outbound',
    title: 'Calls out',
    help: 'docs/settings.md#calls-out',
    description:
      'What your own agent may call through the bridge (its MCP tools): SAMVAD calls are signed as this agent and every signed reply verified; A2A calls carry the credential you keep for that agent (Access > Calls out).',
    fields: [
      {
        name: 'outbound',
        label: 'Outbound policy',
        kind: 'select',
        options: [
          { value: 'any', label: 'Any agent' },
          { value: 'allowlist', label: 'Only the agents listed below' },
          { value: 'off', label: 'Off: no calls out' },
        ],
      },
      {
        name: 'outboundAllowed',
        label: 'Agents your agent may call',
        kind: 'list',
        placeholder: 'agent://friend.example.com',
        help: 'One per line: a SAMVAD agent id (agent://host) or an A2A agent’s https base URL (https://host); either allows that host. Used with “Only the agents listed below”.',
      },
      {
        name: 'outboundPerMinute',
        label: 'Requests out per minute',
        kind: 'number',
        min: 1,
        max: 10000,
        help: 'Every request to another agent counts: each card fetch (cached cards are free), call and task poll. An async call that runs out hands back its taskId.',
      },
      {
        name: 'outboundTimeoutMs',
        label: 'Longest call out (seconds)',
        kind: 'number',
        msAsSeconds: true,
        min: 1,
        max: 600,
        help: 'Async calls are polled up to this long. Above about 50 s, the openclaw mcp command needs --timeout (the Overview’s command adds it).',
      },
      {
        name: 'outboundMaxReplyBytes',
        label: 'Largest reply (bytes)',
        kind: 'number',
        min: 1024,
        max: 8388608,
      },
      {
        name: 'outboundRequireSignedReplies',
        label: 'Refuse unsigned replies',
        kind: 'boolean',
        help: 'Agents built with the protocol’s own SDKs sign no replies: by default their replies are used and marked unsigned, in Traffic and in what your agent reads. A reply whose signature is present but wrong is always refused.',
      },
      {
        name: 'outboundCallsPerDay',
        label: 'Calls to one agent a day',
        kind: 'number',
        min: 0,
        max: 1000000,
        help: 'Each samvad_call and a2a_send counts, per agent called, per UTC day. Past it your agent is told the budget is spent and when it resets. 0: no limit.',
      },
      {
        name: 'outboundTokensPerDay',
        label: 'Tokens to and from one agent a day',
        kind: 'number',
        min: 0,
        max: 1000000000,
        help: 'About four characters sent to or read from the agent make a token. 0: no limit.',
      },
      {
        name: 'hopLimit',
        label: 'Longest chain of calls (hops)',
        kind: 'number',
        min: 1,
        max: 100,
        help: 'A call that is deeper in a chain of agents calling agents is refused, and so is one that comes back round a loop your agent passed on.',
      },
    ],
  },
  {
    id: 'limits',
    title: 'Rate limits',
    description: 'How often callers may call, and how many gateway tokens each may spend a day.',
    help: 'docs/settings.md#rate-limits',
    fields: [
      { name: 'rpm', label: 'Requests per minute (all callers)', kind: 'number' },
      { name: 'perSender', label: 'Requests per minute per sender', kind: 'number' },
      { name: 'tokensPerDay', label: 'Gateway tokens per sender per day', kind: 'number' },
    ],
  },
  {
    id: 'privacy',
    title: 'Privacy',
    description: 'What the traffic log keeps of each call.',
    help: 'docs/settings.md#privacy',
    fields: [
      {
        name: 'keepMessageContents',
        label: 'Keep message contents',
        kind: 'boolean',
        help: 'Keep a truncated preview of each payload and reply in the traffic log (off by default).',
      },
    ],
  },
  {
    id: 'machine',
    title: 'This machine',
    help: 'docs/settings.md#this-machine',
    description:
      'Where the agent listens, how long it keeps tasks, how it stops; and what only the machine sets.',
    fields: [
      {
        name: 'port',
        label: 'Agent port',
        kind: 'number',
        min: 0,
        max: 65535,
        restart: true,
        help: 'The port callers (and the tunnel) reach; 0 takes any free port.',
      },
      {
        name: 'host',
        label: 'Agent listens on',
        kind: 'text',
        restart: true,
        help: '127.0.0.1: this machine only (a tunnel forwards to it); 0.0.0.0: every network interface, for a server.',
      },
      {
        name: 'consolePort',
        label: 'Console port',
        kind: 'number',
        min: 0,
        max: 65535,
        restart: true,
        help: 'This console, on 127.0.0.1 only.',
      },
      {
        name: 'taskRetentionHours',
        label: 'Keep finished tasks (hours)',
        kind: 'number',
        min: 1,
        max: 8760,
        help: 'How long a finished async task stays readable by its caller.',
      },
      {
        name: 'shutdownGraceSeconds',
        label: 'Shutdown grace (seconds)',
        kind: 'number',
        min: 0,
        max: 600,
        help: 'On stop, how long calls in flight may finish before they are failed.',
      },
      { name: 'redisUrl', label: 'Shared state (Redis)', kind: 'text', help: 'Empty: the data dir.' },
      { name: 'keysFile', label: 'Key file', kind: 'text', help: 'Empty: keys.json in the data dir.' },
      { name: 'metricsNoAuth', label: 'Metrics without the console token', kind: 'boolean' },
    ],
  },
];

export const SECRET_LABELS: Record<string, string> = {
  gatewayToken: 'Gateway token',
  bearerTokens: 'Bearer tokens',
};

const FIELDS = new Map(
  SECTIONS.flatMap((section) => section.fields.map((field) => [field.name, field] as const)),
);

export function settingLabel(name: string): string {
  return FIELDS.get(name)?.label ?? SECRET_LABELS[name] ?? name;
}

/**
 * A field error from the console in the page's own words: the console names the setting ("perSender: must
 * be an integer between 1 and 1000000"), the page shows its label ("Requests per minute per sender: must be
 * …"), and a value kept in milliseconds but edited in seconds is given in seconds.
 */
export function fieldErrorText(error: FieldError): string {
  const prefix = `${error.field}: `;
  if (!error.message.startsWith(prefix)) return error.message;
  const field = FIELDS.get(error.field);
  let rule = error.message.slice(prefix.length);
  if (field?.msAsSeconds) {
    rule = rule.replace(
      /an integer between (\d+) and (\d+) \(milliseconds\)/,
      (_all, min: string, max: string) => `between ${Number(min) / 1000} and ${Number(max) / 1000} seconds`,
    );
  }
  // A unit the label already names ("Request expiry (hours)") is not said twice.
  const unit = /\(([^)]+)\)$/.exec(settingLabel(error.field))?.[1];
  if (unit) rule = rule.replace(` (${unit})`, '');
  return `${settingLabel(error.field)}: ${rule}`;
}

export function isFormField(name: string): boolean {
  return FIELDS.has(name) || name in SECRET_LABELS;
}

/** The flag that sets a setting the console may not change, for its hint (SettingsResponse.readOnly). */
const READ_ONLY_FLAGS: Record<string, string> = {
  tunnelCommand: '--tunnel-command',
  tunnelUrlPattern: '--tunnel-url-pattern',
  redisUrl: '--redis-url',
  keysFile: '--keys-file',
  metricsNoAuth: '--metrics-no-auth',
};

/** Why the console may not set each read-only setting (src/console/settings-api.ts says the same). */
const READ_ONLY_WHY: Record<string, string> = {
  tunnelCommand: 'the console cannot set a command the agent runs',
  tunnelUrlPattern: 'it goes with the tunnel command',
  redisUrl: 'every replica must use the same one, read at start',
  keysFile: "it is the agent's identity, read at start",
  metricsNoAuth: 'it would open /metrics to every local user and process',
};

/** Why a read-only setting cannot be changed here and where to change it. */
export function readOnlyHint(name: string): string {
  const flag = READ_ONLY_FLAGS[name];
  return flag
    ? `Set with ${flag} or in settings.json on the machine: ${READ_ONLY_WHY[name] ?? 'the console cannot change it'}.`
    : 'Set on the machine that runs the bridge (its flag, or settings.json in the data dir): the console cannot change it.';
}

/** A setting read at start: whether a saved change waits for a restart, in words. */
export function restartHint(pending: boolean): string {
  return pending
    ? 'Restart needed: saved, but the running agent still uses the value it started with.'
    : 'Read at start: a change applies after a restart.';
}

/** What the console shows in place of a password in a URL (`http://user:***@host`). */
export const MASKED_PASSWORD = '***';

export const MASKED_PASSWORD_HINT = 'The password is hidden; leave *** to keep it.';

export const NEW_GATEWAY_ADDRESS_NEEDS_TOKEN =
  "The gateway's address changes: enter its token again, so your current token is never sent to a new address.";

export type FormValues = Record<string, string | boolean>;

/** Secrets typed into the form: empty means "keep what is set". */
export interface SecretInputs {
  gatewayToken: string;
  /** New bearer tokens, one per line; they replace the current list. */
  bearerTokens: string;
}

export const EMPTY_SECRETS: SecretInputs = { gatewayToken: '', bearerTokens: '' };

export function toFormValues(settings: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const field of FIELDS.values()) {
    const value = settings[field.name];
    if (field.kind === 'boolean') values[field.name] = value === true;
    else if (field.kind === 'list')
      values[field.name] = Array.isArray(value) ? value.map(String).join('\n') : '';
    else if (field.msAsSeconds && typeof value === 'number') values[field.name] = String(value / 1000);
    else values[field.name] = value === undefined || value === null ? '' : String(value);
  }
  return values;
}

const SOURCE_WORDS: Record<SettingSourceView['source'], string> = {
  default: 'default',
  settings: 'saved in settings.json',
  flag: 'set at start by',
  env: 'set at start by',
  'openclaw.json': 'from OpenClaw’s config',
};

/**
 * Where a setting's value comes from, in words: "default", "saved in settings.json", "set at start by
 * --rpm", "from OpenClaw’s config (~/.openclaw/openclaw.json)"; when the setting is not set and another place
 * supplies the value, that value first ("in use: http://127.0.0.1:18789, from OpenClaw’s config (...)").
 */
export function describeSource(view: SettingSourceView, field?: SettingField): string {
  const words = SOURCE_WORDS[view.source];
  const where =
    view.source === 'flag' || view.source === 'env'
      ? `${words} ${view.from ?? 'a flag'}`
      : view.from
        ? `${words} (${view.from})`
        : words;
  const inUse = view.value === undefined ? where : `In use: ${shownValue(view.value, field)}, ${where}`;
  const text = inUse.charAt(0).toUpperCase() + inUse.slice(1);
  return view.overridesAtStart
    ? `${text}; at the next start ${view.overridesAtStart} (given at start) applies again.`
    : `${text}.`;
}

/** A secret's state as Settings shows it: whether one is in use and where from, never its value. */
export function secretState(state: string, view: SettingSourceView | undefined): string {
  if (!view || view.source === 'default' || view.source === 'settings') return state;
  return `${state} (${view.source === 'openclaw.json' ? 'from openclaw.json' : `by ${view.from ?? view.source}`})`;
}

function shownValue(value: unknown, field?: SettingField): string {
  if (field?.msAsSeconds && typeof value === 'number') return `${value / 1000} s`;
  if (Array.isArray(value)) return value.length > 0 ? value.map(String).join(', ') : 'none';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return String(value);
}

export function parseList(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

export interface ChangeSet {
  changes: Record<string, unknown>;
  /** Problems found before sending (a number that is not one). */
  errors: FieldError[];
}

/**
 * Only what differs from what was loaded; secrets only when typed; never a setting in `readOnly` (the
 * console refuses a change to one with 403).
 */
export function changedSettings(
  initial: FormValues,
  current: FormValues,
  secrets: SecretInputs,
  readOnly: readonly string[] = [],
): ChangeSet {
  const changes: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const field of FIELDS.values()) {
    if (readOnly.includes(field.name)) continue;
    const before = initial[field.name];
    const after = current[field.name];
    if (after === undefined) continue;
    switch (field.kind) {
      case 'boolean':
        if (after !== before) changes[field.name] = after;
        break;
      case 'number': {
        const text = String(after).trim();
        if (text === String(before ?? '').trim()) break;
        // Seconds may have a fraction (0.5 s); milliseconds, counts and bytes are whole.
        if (field.msAsSeconds ? !/^\d+(\.\d{1,3})?$/.test(text) : !/^-?\d+$/.test(text)) {
          const what = field.msAsSeconds ? 'a number of seconds (at most 3 decimals)' : 'a whole number';
          errors.push({ field: field.name, message: `${field.label} must be ${what}` });
          break;
        }
        if (
          (field.min !== undefined && Number(text) < field.min) ||
          (field.max !== undefined && Number(text) > field.max)
        ) {
          errors.push({
            field: field.name,
            message: `${field.label} must be between ${field.min ?? '…'} and ${field.max ?? '…'}`,
          });
          break;
        }
        if (Number(text) !== Number(before)) {
          changes[field.name] = field.msAsSeconds ? Math.round(Number(text) * 1000) : Number(text);
        }
        break;
      }
      case 'list': {
        const list = parseList(String(after));
        if (list.join('\n') !== parseList(String(before ?? '')).join('\n')) changes[field.name] = list;
        break;
      }
      default: {
        const text = String(after).trim();
        if (text === String(before ?? '').trim()) break;
        if (field.maxLength !== undefined && text.length > field.maxLength) {
          errors.push({
            field: field.name,
            message: `${field.label} must be at most ${field.maxLength} characters (it has ${text.length})`,
          });
          break;
        }
        changes[field.name] = text === '' && field.optional ? null : text;
      }
    }
  }
  if (secrets.gatewayToken.trim()) changes.gatewayToken = secrets.gatewayToken.trim();
  const bearer = parseList(secrets.bearerTokens);
  if (bearer.length > 0) changes.bearerTokens = bearer;
  return { changes, errors };
}

export interface GatewayTokenContext {
  /** Whether a gateway token is set (`secrets.gatewayToken.set`). */
  tokenSet: boolean;
  /** The gateway URL in use when the setting is empty (env, OpenClaw's config, the default), when known. */
  urlInUse?: string;
}

/**
 * The gateway token typed again, required when the Gateway URL moves to another origin (scheme, host or port)
 * or is cleared while a token is set: the console never sends the current token to an address a console user
 * chose (the server refuses such a change with 400 on `gatewayToken`). A path change keeps the origin; a value
 * that is not a URL is left to validation.
 */
export function gatewayTokenNeeded(
  initial: FormValues,
  current: FormValues,
  secrets: SecretInputs,
  context: GatewayTokenContext,
): FieldError | undefined {
  if (!context.tokenSet || secrets.gatewayToken.trim() !== '') return undefined;
  const before = String(initial.gatewayUrl ?? '').trim();
  const after = String(current.gatewayUrl ?? '').trim();
  if (after === before) return undefined;
  const needed = { field: 'gatewayToken', message: NEW_GATEWAY_ADDRESS_NEEDS_TOKEN };
  if (after === '') return needed;
  const next = originOf(after);
  if (next === undefined) return undefined;
  // Unknown (not set and no status yet, or not a URL): the token is asked for rather than risked.
  const inUse = originOf(before || context.urlInUse || '');
  return next === inUse ? undefined : needed;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** A random bearer token for callers: 32 bytes, base64url. */
export function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}
