import { parseArgs } from 'node:util';
import { keyIdOf } from '../access/a2a-keys.js';
import { printable } from '../lib/text.js';
import type { A2AKeyLimits, A2AKeyView } from '../protocol/console-api.js';
import { defaultDataDir } from '../settings/data-dir.js';
import { KeysCommandError, openKeysClient } from './keys-client.js';

export const KEYS_HELP = `Usage: agent-bridge keys <list | issue | revoke> [flags]   (npx agent-bridge keys ...)

A2A keys are what agents on the A2A network present to call yours: each one sends its key with every
request as "Authorization: Bearer abk_...". A key is its own caller (a2a-key:<id>) in access lists,
rate limits, the daily token budget and Traffic.

  list                       every key: id, name, status, created, last used, calls, expiry, limits, skills
  issue --name NAME [--expires WHEN] [--rpm N] [--tokens-per-day N] [--skills A,B]
                             a new key, printed once: only a hash of it is kept
  revoke ID                  refuses the key from the next request on (ID from the list, or the key itself)

Flags:
  --name NAME                the agent the key is for (one line, at most 100 characters)
  --expires WHEN             after how long (12h, 30d, 2w, 1y) or from when (2026-01-31, or an ISO 8601
                             time); default: never
  --rpm N                    the key's own requests per minute (default: the per-sender limit)
  --tokens-per-day N         the key's own daily token budget (default: the agent's --tokens-per-day)
  --skills A,B               the skills the key opens, exactly (a named skill included); default: every
                             public and approved skill
  --json                     print JSON, for scripts
  --data-dir DIR             the agent's data dir (env: AGENT_BRIDGE_DATA_DIR; default: the per-user
                             app-data folder)
  --redis-url URL            the Redis of your replicas, when no agent runs on this data dir (env:
                             REDIS_URL; default: the saved setting)

Where the change is made: when an agent runs on the data dir, through its console (the URL and token in
<data dir>/console.json), so it applies in that agent at once, reaches its replicas within a second, and
shows on the console's Access page. When none runs, in <data dir>/a2a-keys.json (or in Redis, with
replicas), which the agent reads when it starts.
`;

const OPTIONS = {
  name: { type: 'string' },
  expires: { type: 'string' },
  rpm: { type: 'string' },
  'tokens-per-day': { type: 'string' },
  skills: { type: 'string' },
  json: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'redis-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags and the commands `keys` takes, as it parses them: the docs show no other (docs-commands.test.ts). */
export const KEYS_OPTIONS = OPTIONS;
export const KEYS_ACTIONS = ['list', 'issue', 'revoke'] as const;

/** The CLI's names for the fields the keys refuse. */
const FLAG_OF: Record<string, string> = {
  name: '--name',
  expiresAt: '--expires',
  'limits.requestsPerMinute': '--rpm',
  'limits.tokensPerDay': '--tokens-per-day',
  skills: '--skills',
};

/** `agent-bridge keys ...`: prints to stdout (what it did to stderr); throws an Error that says what to do. */
export async function runKeysCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    throw new Error(`${(error as Error).message.replace(/\.$/, '')}. Run: agent-bridge keys --help`);
  }
  const { values, positionals } = parsed;
  const [action, ...rest] = positionals;
  if (values.help || action === undefined || action === 'help') {
    process.stdout.write(KEYS_HELP);
    return;
  }
  const expected = action === 'revoke' ? 1 : 0;
  if (!(KEYS_ACTIONS as readonly string[]).includes(action)) {
    throw new Error(
      `Unknown keys command "${action}": use list, issue or revoke. Run: agent-bridge keys --help`,
    );
  }
  if (rest.length !== expected) {
    throw new Error(
      action === 'revoke'
        ? 'Name the key to revoke: agent-bridge keys revoke ID (the id from `agent-bridge keys list`).'
        : `Unexpected argument "${printable(rest[0] ?? '')}" after "${action}". Run: agent-bridge keys --help`,
    );
  }
  const onlyFor = (flags: (keyof typeof OPTIONS)[], command: string) => {
    const given = flags.filter((flag) => values[flag] !== undefined);
    if (given.length > 0 && action !== command)
      throw new Error(`--${given[0]} applies to "keys ${command}" only. Run: agent-bridge keys --help`);
  };
  onlyFor(['name', 'expires', 'rpm', 'tokens-per-day', 'skills'], 'issue');
  // A leaked key pasted whole is revoked by its id: the key itself is never sent anywhere.
  const id = action === 'revoke' ? (keyIdOf(rest[0] ?? '') ?? rest[0] ?? '') : '';
  const request = action === 'issue' ? issueRequest(values) : undefined;

  const client = await openKeysClient({
    dataDir: values['data-dir'] ?? defaultDataDir(env),
    redisUrl: values['redis-url'] ?? (env.REDIS_URL || undefined),
  });
  try {
    if (action === 'list') {
      const keys = await client.list();
      print(values.json ? JSON.stringify({ keys }, null, 2) : listText(keys));
    } else if (action === 'issue') {
      const issued = await client.issue(request);
      print(values.json ? JSON.stringify(issued, null, 2) : issuedText(issued.key, issued.secret));
      process.stderr.write(`Issued ${client.where}.\n`);
    } else {
      const key = await client.revoke(id);
      print(
        values.json
          ? JSON.stringify({ key }, null, 2)
          : `Revoked the A2A key ${key.id} ("${printable(key.name)}") at ${when(key.revokedAt)}: requests with it are refused.`,
      );
      process.stderr.write(`Revoked ${client.where}.\n`);
    }
  } catch (error) {
    if (error instanceof KeysCommandError) throw new Error(forTheCommandLine(error));
    throw error;
  } finally {
    await client.close();
  }
}

function issueRequest(values: {
  name?: string;
  expires?: string;
  rpm?: string;
  'tokens-per-day'?: string;
  skills?: string;
}) {
  if (values.name === undefined) {
    throw new Error('Name the agent the key is for: agent-bridge keys issue --name "Research agent".');
  }
  const limits: Record<string, unknown> = {};
  // Whole numbers as numbers; anything else goes as typed, and the keys say what they take.
  const number = (text: string) => (/^\d+$/.test(text) ? Number(text) : text);
  if (values.rpm !== undefined) limits.requestsPerMinute = number(values.rpm);
  if (values['tokens-per-day'] !== undefined) limits.tokensPerDay = number(values['tokens-per-day']);
  // `--skills research,summary`: the ids as typed (empty entries dropped); the keys say what they take.
  const skills = values.skills
    ?.split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  return {
    name: values.name,
    ...(values.expires === undefined ? {} : { expiresAt: expiryOf(values.expires) }),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(skills === undefined ? {} : { skills }),
  };
}

const UNITS: Record<string, number> = { h: 3600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 };

/** `30d` from now, or a date (`2026-01-31`, UTC midnight) or time as ISO 8601; the keys check its range. */
function expiryOf(text: string): string {
  const span = /^(\d+)\s*([hdwy])$/i.exec(text.trim());
  if (span)
    return new Date(Date.now() + Number(span[1]) * (UNITS[span[2]!.toLowerCase()] ?? 0)).toISOString();
  if (/^\d{4}-\d\d-\d\d/.test(text.trim()) && Number.isFinite(Date.parse(text.trim()))) return text.trim();
  throw new Error(
    `--expires takes a span (12h, 30d, 2w, 1y) or a date (2026-01-31, or an ISO 8601 time), not "${printable(text)}".`,
  );
}

function issuedText(key: A2AKeyView, secret: string): string {
  const terms = [
    `id ${key.id}`,
    key.expiresAt ? `expires ${when(key.expiresAt)}` : 'never expires',
    ...(Object.keys(key.limits).length > 0 ? [`own limits: ${limitsText(key.limits)}`] : []),
    key.skills ? `opens only ${key.skills.join(', ')}` : 'opens every public and approved skill',
  ];
  return [
    `Issued an A2A key for "${printable(key.name)}" (${terms.join('; ')}):`,
    '',
    `  ${secret}`,
    '',
    'Copy it now: it is not shown again (the agent keeps only a hash of it). Give it to the operator of that',
    'agent over a private channel; their agent sends it with every A2A request as',
    `  Authorization: Bearer ${secret}`,
    `If it leaks, revoke it: agent-bridge keys revoke ${key.id}`,
  ].join('\n');
}

function listText(keys: A2AKeyView[]): string {
  if (keys.length === 0) return 'No A2A keys yet. Issue one: agent-bridge keys issue --name "Research agent"';
  const rows = keys.map((key) => [
    key.id,
    printable(key.name),
    key.status,
    when(key.createdAt),
    key.lastUsedAt ? when(key.lastUsedAt) : 'never',
    String(key.calls),
    key.expiresAt ? when(key.expiresAt) : 'never',
    Object.keys(key.limits).length > 0 ? limitsText(key.limits) : 'defaults',
    key.skills ? key.skills.join(',') : 'public+approved',
  ]);
  const header = ['ID', 'NAME', 'STATUS', 'CREATED', 'LAST USED', 'CALLS', 'EXPIRES', 'LIMITS', 'SKILLS'];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function limitsText(limits: A2AKeyLimits): string {
  return [
    limits.requestsPerMinute === undefined ? '' : `${limits.requestsPerMinute} requests/min`,
    limits.tokensPerDay === undefined ? '' : `${limits.tokensPerDay} tokens/day`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** `2025-06-01 12:00 UTC` */
function when(iso: string | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '-';
}

/** The refusal in the CLI's words: its flags instead of the API's field names, then the fix. */
function forTheCommandLine(error: KeysCommandError): string {
  const fields = error.fields.map(({ field, message }) => `${FLAG_OF[field] ?? field} ${message}`);
  const message = fields.length > 0 ? `The key was not issued: ${fields.join('; ')}.` : error.message;
  return error.fix && fields.length === 0 ? `${message} ${error.fix}` : message;
}

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}
