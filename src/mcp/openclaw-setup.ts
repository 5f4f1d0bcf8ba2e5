/**
 * Connecting OpenClaw to the bridge's MCP server: the exact `openclaw mcp` commands (OpenClaw 2026.9:
 * `add` takes `--url`, `--transport streamable-http` and repeatable `--header KEY=VALUE`; `set` writes one
 * `mcp.servers.<name>` entry from JSON), the tool-policy snippet that keeps the tools from the agent
 * strangers reach, and whether the gateway's config already lists the server.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import { secretMatches } from '../lib/token-compare.js';

/** The name under `mcp.servers`; OpenClaw names its tools `agent-bridge__<tool>` (provider-safe prefix). */
export const MCP_SERVER_NAME = 'agent-bridge';
export const MCP_PATH = '/mcp';
/** Every tool of this server, as OpenClaw's tool policy names them. */
export const MCP_TOOL_GLOB = `${MCP_SERVER_NAME}__*`;

// OpenClaw's own per-request MCP timeout (DEFAULT_REQUEST_TIMEOUT_MS, 60 s): longer calls need --timeout.
const OPENCLAW_DEFAULT_TIMEOUT_MS = 60_000;
const TIMEOUT_MARGIN_MS = 10_000;

/** `openclaw mcp add ...`: the first connection (it probes the server before saving). */
export function addCommand(url: string, token: string, outboundTimeoutMs: number): string {
  const parts = [
    `openclaw mcp add ${MCP_SERVER_NAME}`,
    `--url ${url}`,
    '--transport streamable-http',
    `--header 'Authorization=Bearer ${token}'`,
  ];
  const timeout = requestTimeoutSeconds(outboundTimeoutMs);
  if (timeout) parts.push(`--timeout ${timeout}`);
  return parts.join(' ');
}

/** `openclaw mcp set ...`: creates or replaces the entry (after a new token, or a new address). */
export function setCommand(url: string, token: string, outboundTimeoutMs: number): string {
  const timeout = requestTimeoutSeconds(outboundTimeoutMs);
  const server = {
    url,
    transport: 'streamable-http',
    headers: { Authorization: `Bearer ${token}` },
    ...(timeout ? { requestTimeoutMs: timeout * 1000 } : {}),
  };
  return `openclaw mcp set ${MCP_SERVER_NAME} '${JSON.stringify(server)}'`;
}

function requestTimeoutSeconds(outboundTimeoutMs: number): number | undefined {
  const needed = outboundTimeoutMs + TIMEOUT_MARGIN_MS;
  return needed > OPENCLAW_DEFAULT_TIMEOUT_MS ? Math.ceil(needed / 1000) : undefined;
}

/**
 * The agent strangers reach (`gatewayAgent`) must not call other agents with the operator's identity: deny
 * this server's tools in its own tool policy (a deny wins over any profile or allow).
 */
export function toolPolicySnippet(agentId: string): string {
  const key = /^[A-Za-z_][A-Za-z0-9_]*$/.test(agentId) ? agentId : JSON.stringify(agentId);
  return [
    '// In ~/.openclaw/openclaw.json: add to the deny list of the agent callers reach (keep its other entries).',
    '{',
    '  agents: {',
    '    entries: {',
    `      ${key}: {`,
    '        tools: {',
    `          deny: ["${MCP_TOOL_GLOB}"],`,
    '        },',
    '      },',
    '    },',
    '  },',
    '}',
  ].join('\n');
}

export interface McpListing {
  /** Whether `mcp.servers` has an entry for this URL. */
  listed: boolean;
  /** Its name there. */
  name?: string;
  /** What is wrong with the entry (or why none matches), and how to fix it. */
  problem?: string;
}

/**
 * Reads the gateway's config (the same file the bridge reads the gateway's address from) and looks for an
 * entry pointing at `url`. Undefined when the file cannot be read or parsed: then nobody can tell.
 */
export function readMcpListing(
  configPath: string,
  url: string,
  token: string,
  env: NodeJS.ProcessEnv = process.env,
): McpListing | undefined {
  const path = configPath.startsWith('~/') ? join(env.HOME || homedir(), configPath.slice(2)) : configPath;
  let config: unknown;
  try {
    config = JSON5.parse<unknown>(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  const servers = record(record(record(config).mcp).servers);
  const entries = Object.entries(servers).map(([name, value]) => ({ name, server: record(value) }));
  const match = entries.find(({ server }) => sameUrl(server.url, url));
  if (!match) {
    const stale = entries.find(({ name, server }) => name === MCP_SERVER_NAME || isBridgeUrl(server.url));
    if (stale) {
      return {
        listed: false,
        name: stale.name,
        problem: `The gateway's config lists "${stale.name}" at ${String(stale.server.url)}, but the bridge's MCP server is at ${url} now: update the entry (the console shows the command).`,
      };
    }
    return { listed: false };
  }
  const { name, server } = match;
  const transport = server.transport ?? server.type;
  if (server.enabled === false) {
    return { listed: true, name, problem: `"${name}" is disabled in the gateway's config (enabled: false).` };
  }
  if (transport !== 'streamable-http' && transport !== 'http') {
    return {
      listed: true,
      name,
      problem: `"${name}" uses transport ${transport === undefined ? 'sse (the default)' : JSON.stringify(transport)}: the bridge speaks streamable-http.`,
    };
  }
  const header = authorizationOf(record(server.headers), env);
  if (header !== undefined && !secretMatches(`Bearer ${token}`, header)) {
    return {
      listed: true,
      name,
      problem: `"${name}" sends another token than the bridge's current one (it was regenerated?): update the entry with the new token.`,
    };
  }
  return { listed: true, name };
}

/** The Authorization header as the gateway would send it; undefined when it is not a literal we can read. */
function authorizationOf(headers: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === 'authorization');
  if (!entry || typeof entry[1] !== 'string') return undefined;
  // OpenClaw substitutes ${UPPER_CASE} names from the environment; one we cannot resolve we cannot judge.
  let unresolved = false;
  const value = entry[1].replace(/\$?\$\{([A-Z_][A-Z0-9_]*)\}/g, (match, name: string) => {
    if (match.startsWith('$$')) return match.slice(1);
    const found = env[name];
    if (found === undefined) unresolved = true;
    return found ?? '';
  });
  return unresolved ? undefined : value.trim();
}

function sameUrl(candidate: unknown, url: string): boolean {
  const a = normalize(candidate);
  return a !== undefined && a === normalize(url);
}

function isBridgeUrl(candidate: unknown): boolean {
  const normal = normalize(candidate);
  return normal !== undefined && /^http:\/\/127\.0\.0\.1:\d+\/mcp$/.test(normal);
}

// localhost and 127.0.0.1 are the same loopback address to the bridge's listener; a trailing slash is noise.
function normalize(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value.trim());
    if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
