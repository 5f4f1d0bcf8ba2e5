import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  DEFAULT_SETTINGS,
  SECRET_SETTINGS,
  settingRule,
  validateSettings,
  type SettingName,
  type Settings,
} from './schema.js';
import type { OverrideOrigin } from './sources.js';

export interface ServeArgs {
  /** From --data-dir or AGENT_BRIDGE_DATA_DIR; undefined means defaultDataDir(). */
  dataDir?: string;
  /** Which of the two gave `dataDir` (a demo takes only the flag's as its own: demo-mode.ts). */
  dataDirFrom?: 'flag' | 'env';
  /** Settings for this run only: they override the store and are never written to it. */
  overrides: Partial<Settings>;
  /** Which flag or environment variable set each override (the console shows it). */
  origins: Partial<Record<SettingName, OverrideOrigin>>;
  help: boolean;
  /** --register: register with the agent registry once the public URL is reachable. */
  register: boolean;
  /** --new-console-token: replace the console token kept in console.json. */
  newConsoleToken: boolean;
  /** --demo: a built-in stand-in gateway for this run only (src/demo/demo-mode.ts); never a setting. */
  demo: boolean;
}

interface FlagSpec {
  flag: string;
  setting?: SettingName;
  /** Placeholder in the help text; absent for switches. */
  value?: string;
  repeatable?: boolean;
  env?: string;
  /** Extra env names shown in the help (handled elsewhere). */
  envAliases?: string[];
  help: string;
  /** Shown instead of the setting's default. */
  defaultText?: string;
  /** Text (or repeated texts) to setting value; by default numbers are parsed and text passes through. */
  convert?: (raw: string[]) => unknown;
  /** The rule when the flag's unit differs from the setting's. */
  rule?: string;
}

const toNumber = (raw: string[]): unknown => numberOrText(last(raw));
// A switch set from the environment: 1/true/yes/on or 0/false/no/off; anything else is left for validation.
const toSwitch = (raw: string[]): unknown => {
  const text = last(raw).trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  return ['0', 'false', 'no', 'off'].includes(text) ? false : last(raw);
};
const toList = (raw: string[]): string[] =>
  last(raw)
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);

const FLAGS: FlagSpec[] = [
  {
    flag: 'port',
    setting: 'port',
    value: 'N',
    env: 'PORT',
    help: 'agent port (0 = any free port)',
  },
  { flag: 'host', setting: 'host', value: 'ADDR', help: 'agent bind address (0.0.0.0 for a server)' },
  {
    flag: 'console-port',
    setting: 'consolePort',
    value: 'N',
    help: 'operator console port (loopback only)',
  },
  {
    flag: 'data-dir',
    value: 'DIR',
    env: 'AGENT_BRIDGE_DATA_DIR',
    help: 'settings, keys and state',
    defaultText: 'the per-user app-data folder',
  },
  {
    flag: 'gateway-url',
    setting: 'gatewayUrl',
    value: 'URL',
    env: 'GATEWAY_URL',
    envAliases: ['OPENCLAW_GATEWAY_URL'],
    help: 'OpenAI-compatible gateway',
    defaultText: 'read from the local OpenClaw config',
  },
  {
    flag: 'gateway-token',
    setting: 'gatewayToken',
    value: 'T',
    env: 'GATEWAY_TOKEN',
    envAliases: ['OPENCLAW_GATEWAY_TOKEN'],
    help: 'gateway bearer token',
    defaultText: 'read from the local OpenClaw config',
  },
  {
    flag: 'gateway-model',
    setting: 'gatewayModel',
    value: 'NAME',
    env: 'GATEWAY_MODEL',
    help: 'explicit model name for gateways that are not OpenClaw (wins over --gateway-agent)',
    defaultText: 'openclaw/<gateway agent>',
  },
  {
    flag: 'gateway-agent',
    setting: 'gatewayAgent',
    value: 'ID',
    env: 'GATEWAY_AGENT',
    help: 'the OpenClaw agent callers reach (keep it restricted: no shell or file tools)',
  },
  {
    flag: 'access',
    setting: 'access',
    value: 'POLICY',
    help: 'who may reach the gateway: pairing (you approve each new sender), allowlist or open',
  },
  {
    flag: 'pending-expiry',
    setting: 'pendingExpiryHours',
    value: 'HOURS',
    help: "how long a new sender's request waits for your approval",
  },
  {
    flag: 'caller-instructions',
    setting: 'callerInstructions',
    value: 'TEXT',
    help: 'your instructions to the gateway agent about callers (sent in every call)',
    defaultText: 'a built-in text',
  },
  {
    flag: 'injection-screen',
    setting: 'injectionScreen',
    value: 'MODE',
    help: 'screen for prompt-injection phrasings: flag, refuse or off',
  },
  {
    flag: 'gateway-timeout',
    setting: 'gatewayTimeoutMs',
    value: 'SECONDS',
    help: 'how long one gateway call may take',
    defaultText: String(DEFAULT_SETTINGS.gatewayTimeoutMs / 1000),
    convert: (raw) => {
      const seconds = numberOrText(last(raw));
      return typeof seconds === 'number' ? Math.round(seconds * 1000) : seconds;
    },
    rule: 'must be a number of seconds between 0.1 and 3600',
  },
  {
    flag: 'tunnel',
    setting: 'tunnel',
    value: 'MODE',
    help: 'how the agent gets a public URL: localtunnel, command or none',
  },
  { flag: 'tunnel-host', setting: 'tunnelHost', value: 'URL', help: 'localtunnel server' },
  {
    flag: 'subdomain',
    setting: 'subdomain',
    value: 'NAME',
    help: 'subdomain to ask the tunnel for',
    defaultText: 'random',
  },
  {
    flag: 'tunnel-name-hold',
    setting: 'tunnelNameHoldSeconds',
    value: 'SECONDS',
    help: 'after losing its address, how long the tunnel asks for the same name again before taking another (the id changes with it)',
  },
  {
    flag: 'tunnel-command',
    setting: 'tunnelCommand',
    value: 'CMD',
    help: 'command that opens a tunnel (--tunnel command)',
    defaultText: 'none',
  },
  {
    flag: 'tunnel-url-pattern',
    setting: 'tunnelUrlPattern',
    value: 'REGEX',
    help: 'how the public URL appears in the tunnel command output',
  },
  {
    flag: 'public-url',
    setting: 'publicUrl',
    value: 'URL',
    help: "the card's url and id when there is no tunnel",
    defaultText: 'none',
  },
  { flag: 'registry-url', setting: 'registryUrl', value: 'URL', help: 'agent registry' },
  {
    flag: 'allowed-peers',
    setting: 'allowedPeers',
    value: 'IDS',
    convert: toList,
    help: 'comma-separated agent:// ids for the trusted-peers tier',
  },
  {
    flag: 'trust-peer',
    setting: 'trustedPeerKeys',
    value: 'ID=KEY',
    repeatable: true,
    convert: toPeerKeys,
    help: "pin a peer's Ed25519 key: agent://host=BASE64KEY (repeatable)",
  },
  {
    flag: 'bearer-token',
    setting: 'bearerTokens',
    value: 'T',
    repeatable: true,
    convert: (raw) => raw,
    help: 'token accepted for the authenticated tier (repeatable)',
  },
  {
    flag: 'chat-trust',
    setting: 'chatTrust',
    value: 'TIER',
    help: 'who may call chat: public, authenticated or trusted-peers',
  },
  {
    flag: 'card-ttl',
    setting: 'cardTTL',
    value: 'SECONDS',
    help: 'how long callers cache the card',
  },
  { flag: 'rpm', setting: 'rpm', value: 'N', help: 'requests per minute, all senders' },
  {
    flag: 'per-sender',
    setting: 'perSender',
    value: 'N',
    help: 'requests per minute per sender',
  },
  {
    flag: 'tokens-per-day',
    setting: 'tokensPerDay',
    value: 'N',
    help: 'gateway tokens per sender per day',
  },
  {
    flag: 'dev-http-peers',
    setting: 'devHttpPeers',
    help: 'let agent://127.0.0.1:PORT peers resolve over http (testing only)',
  },
  { flag: 'allow-unsigned', setting: 'allowUnsigned', help: 'accept unsigned requests for public skills' },
  {
    flag: 'fetch-image-urls',
    setting: 'fetchImageUrls',
    help: 'fetch images callers send by URL (public https addresses only, 10 MB and 10 s each)',
  },
  {
    flag: 'outbound',
    setting: 'outbound',
    value: 'POLICY',
    help: "which agents your own agent may call through the bridge's MCP tools: any, allowlist or off",
  },
  {
    flag: 'outbound-allowed',
    setting: 'outboundAllowed',
    value: 'IDS',
    convert: toList,
    help: 'comma-separated agents your agent may call with --outbound allowlist: agent:// ids or A2A https:// URLs',
  },
  {
    flag: 'outbound-per-minute',
    setting: 'outboundPerMinute',
    value: 'N',
    help: 'HTTP requests to other agents per minute: every card fetch, call and task poll counts',
  },
  {
    flag: 'outbound-timeout',
    setting: 'outboundTimeoutMs',
    value: 'SECONDS',
    help: 'the longest one outbound call may take, async polling included',
    defaultText: String(DEFAULT_SETTINGS.outboundTimeoutMs / 1000),
    convert: (raw) => {
      const seconds = numberOrText(last(raw));
      return typeof seconds === 'number' ? Math.round(seconds * 1000) : seconds;
    },
    rule: 'must be a number of seconds between 1 and 600',
  },
  {
    flag: 'outbound-require-signed-replies',
    setting: 'outboundRequireSignedReplies',
    help: "refuse other agents' replies that carry no signature (the protocol's own SDKs sign none)",
  },
  {
    flag: 'outbound-calls-per-day',
    setting: 'outboundCallsPerDay',
    value: 'N',
    help: 'calls your agent may make to one agent a UTC day (0: no limit)',
  },
  {
    flag: 'outbound-tokens-per-day',
    setting: 'outboundTokensPerDay',
    value: 'N',
    help: 'tokens (about 4 characters each, sent and read) to and from one agent a UTC day (0: no limit)',
  },
  {
    flag: 'hop-limit',
    setting: 'hopLimit',
    value: 'N',
    help: 'the deepest hop of a chain of calls between agents that this agent takes',
  },
  {
    flag: 'shutdown-grace',
    setting: 'shutdownGraceSeconds',
    value: 'SECONDS',
    help: 'on SIGINT/SIGTERM, how long in-flight work may finish before it is failed',
  },
  {
    flag: 'metrics-no-auth',
    setting: 'metricsNoAuth',
    env: 'AGENT_BRIDGE_METRICS_NO_AUTH',
    convert: toSwitch,
    rule: 'must be 1, true, 0 or false',
    help: "serve /metrics on the console's loopback port without the console token (a local Prometheus)",
  },
  {
    flag: 'redis-url',
    setting: 'redisUrl',
    value: 'URL',
    env: 'REDIS_URL',
    help: 'share nonces, limits, tasks and approvals with other replicas on this Redis',
    defaultText: 'none: the data dir',
  },
  {
    flag: 'keys-file',
    setting: 'keysFile',
    value: 'PATH',
    help: 'the identity key file (replicas share one, e.g. on shared storage)',
    defaultText: '<data dir>/keys.json',
  },
  {
    flag: 'task-lease',
    setting: 'taskLeaseSeconds',
    value: 'SECONDS',
    help: 'with --redis-url: how long before other replicas fail the tasks of one that stopped',
  },
  {
    flag: 'delegation-max-lifetime',
    setting: 'delegationMaxLifetimeSeconds',
    value: 'SECONDS',
    help: 'the longest-lived delegation token a caller may present (longer ones: 401 AUTH_FAILED)',
  },
  {
    flag: 'register',
    help: 'register with the agent registry once the public URL is reachable',
    defaultText: '',
  },
  {
    flag: 'demo',
    help: 'try it without a gateway: a built-in stand-in answers, saying no model is behind it; its own data dir (<data dir>/demo), no tunnel unless --tunnel; this run only',
    defaultText: '',
  },
  {
    flag: 'new-console-token',
    help: 'replace the console token (kept in console.json across restarts): earlier links and open tabs stop working',
    defaultText: '',
  },
  { flag: 'help', help: 'show this help', defaultText: '' },
];

/** The flag that sets a setting for one run, and the environment variables that do the same. */
export function flagOf(name: SettingName): { flag: string; env: string[] } | undefined {
  const spec = FLAGS.find((candidate) => candidate.setting === name);
  if (!spec) return undefined;
  const env = [spec.env, ...(spec.envAliases ?? [])].filter((item): item is string => item !== undefined);
  return { flag: `--${spec.flag}`, env };
}

const PARSE_OPTIONS: NonNullable<ParseArgsConfig['options']> = Object.fromEntries(
  FLAGS.map((spec) => [
    spec.flag,
    spec.value === undefined
      ? { type: 'boolean' as const, ...(spec.flag === 'help' ? { short: 'h' } : {}) }
      : { type: 'string' as const, multiple: spec.repeatable ?? false },
  ]),
);

/** The flags `serve` takes, as it parses them: the docs show no other (test/unit/docs-commands.test.ts). */
export const SERVE_OPTIONS: Readonly<NonNullable<ParseArgsConfig['options']>> = PARSE_OPTIONS;

/** `agent-bridge serve` flags and env; flags beat env. Throws an Error naming the flag and its rule. */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv): ServeArgs {
  const values = parseStrict(argv);
  if (values.help === true) {
    return { overrides: {}, origins: {}, help: true, register: false, newConsoleToken: false, demo: false };
  }

  const overrides: Record<string, unknown> = {};
  const sources = new Map<SettingName, { spec: FlagSpec; label: string; raw: string[] }>();
  let dataDir: string | undefined;
  let dataDirFrom: ServeArgs['dataDirFrom'];
  for (const spec of FLAGS) {
    const fromFlag = values[spec.flag];
    const fromEnv = spec.env ? env[spec.env] : undefined;
    let raw: string[] | boolean | undefined;
    let label = `--${spec.flag}`;
    if (typeof fromFlag === 'boolean') raw = fromFlag;
    else if (fromFlag !== undefined) raw = [fromFlag].flat().filter((item) => typeof item === 'string');
    else if (fromEnv) [raw, label] = [[fromEnv], spec.env as string];
    if (raw === undefined || spec.flag === 'help' || spec.flag === 'register') continue;
    if (spec.flag === 'data-dir') {
      dataDir = last(raw as string[]);
      dataDirFrom = label.startsWith('--') ? 'flag' : 'env';
      continue;
    }
    if (!spec.setting) continue;
    overrides[spec.setting] = typeof raw === 'boolean' ? raw : converterOf(spec)(raw);
    sources.set(spec.setting, { spec, label, raw: typeof raw === 'boolean' ? [] : raw });
  }

  const result = validateSettings(overrides);
  if (!result.ok) {
    const messages = result.errors.map(({ field, message }) => {
      const source = sources.get(field as SettingName);
      if (!source) return message;
      // A message of its own (two spellings of one pinned id) says more than the setting's rule.
      if (message !== `${field}: ${settingRule(field as SettingName)}`)
        return `${source.label}: ${message.slice(field.length + 2)}`;
      const secret = (SECRET_SETTINGS as readonly string[]).includes(field);
      const got = secret || source.raw.length === 0 ? '' : ` (got ${JSON.stringify(source.raw.join(' '))})`;
      return `${source.label}: ${source.spec.rule ?? settingRule(field as SettingName)}${got}`;
    });
    throw new Error(`${messages.join('; ')}. Run with --help to list the flags.`);
  }
  const origins: Partial<Record<SettingName, OverrideOrigin>> = {};
  for (const [name, { label }] of sources) {
    origins[name] = label.startsWith('--') ? { source: 'flag', name: label } : { source: 'env', name: label };
  }
  return {
    ...(dataDir === undefined ? {} : { dataDir, dataDirFrom }),
    overrides: result.value,
    origins,
    help: false,
    register: values.register === true,
    newConsoleToken: values['new-console-token'] === true,
    demo: values.demo === true,
  };
}

function parseStrict(argv: string[]): Record<string, string | boolean | (string | boolean)[] | undefined> {
  try {
    return parseArgs({ args: argv, options: PARSE_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new Error(`Unknown flag ${unknownFlag(argv)}. Run with --help to list the flags.`);
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new Error(
        `Unexpected argument ${JSON.stringify(positional(argv))}: serve takes only flags. Run with --help.`,
      );
    }
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message.replace(/\.$/, '')}. Run with --help to list the flags.`);
  }
}

// parseArgs's own message suggests "--" tricks; re-parse loosely to name the offending flag instead.
function unknownFlag(argv: string[]): string {
  const { tokens } = parseArgs({ args: argv, options: PARSE_OPTIONS, strict: false, tokens: true });
  const token = tokens.find((t) => t.kind === 'option' && !Object.hasOwn(PARSE_OPTIONS, t.name));
  return token?.kind === 'option' ? token.rawName : 'given';
}

function positional(argv: string[]): string {
  const { tokens } = parseArgs({ args: argv, options: PARSE_OPTIONS, strict: false, tokens: true });
  const token = tokens.find((t) => t.kind === 'positional');
  return token?.kind === 'positional' ? token.value : '';
}

// Numeric settings parse their text; the rest take the last value given unless the flag says otherwise.
function converterOf(spec: FlagSpec): (raw: string[]) => unknown {
  if (spec.convert) return spec.convert;
  const fallback = spec.setting ? (DEFAULT_SETTINGS as Partial<Settings>)[spec.setting] : undefined;
  return typeof fallback === 'number' ? toNumber : last;
}

function toPeerKeys(raw: string[]): unknown {
  const keys: Record<string, string> = {};
  for (const pair of raw) {
    const at = pair.indexOf('=');
    // Agent ids never contain '=', so the first one separates the id from the (padded) base64 key.
    if (at <= 0 || at === pair.length - 1) {
      throw new Error(`--trust-peer: expected agent://host=BASE64KEY (got ${JSON.stringify(pair)})`);
    }
    keys[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return keys;
}

// Keeps a non-numeric text as is, so validation reports the rule instead of a NaN or a silent 0.
function numberOrText(text: string): number | string {
  return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text;
}

function last(raw: string[]): string {
  return raw[raw.length - 1] ?? '';
}

/** `--help` output: every flag, its default and its env var, one per line. */
export const SERVE_HELP = buildHelp();

function buildHelp(): string {
  const left = (spec: FlagSpec) => `--${spec.flag}${spec.value ? ` ${spec.value}` : ''}`;
  const width = Math.max(...FLAGS.map((spec) => left(spec).length)) + 2;
  const lines = FLAGS.map((spec) => {
    const fallback = spec.defaultText ?? defaultText(spec);
    const env = [spec.env, ...(spec.envAliases ?? [])].filter(Boolean).join(' or ');
    const notes = [fallback ? `default: ${fallback}` : '', env ? `env: ${env}` : '']
      .filter(Boolean)
      .join('; ');
    return `  ${left(spec).padEnd(width)}${spec.help}${notes ? ` (${notes})` : ''}`;
  });
  return [
    'Usage: agent-bridge serve [flags]   (npm run serve -- [flags])',
    '',
    'Flags and env apply to this run only; the settings store keeps the saved values.',
    'A2A keys for the agents that call yours: agent-bridge keys --help',
    'Call an agent (yours, or another) and see its verified reply: agent-bridge call --help',
    '',
    ...lines,
    '',
  ].join('\n');
}

function defaultText(spec: FlagSpec): string {
  if (!spec.setting) return '';
  const value = (DEFAULT_SETTINGS as Partial<Settings>)[spec.setting];
  if (value === undefined) return 'not set';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (Array.isArray(value)) return value.length > 0 ? value.join(',') : 'none';
  if (typeof value === 'object') return Object.keys(value).length > 0 ? JSON.stringify(value) : 'none';
  return String(value);
}
