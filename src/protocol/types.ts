/** Wire types of SAMVAD 1.2 (PROTOCOL.md). Pure data: no I/O here. */
import type { CallChain } from './call-chain.js';
import type { ErrorCode } from './errors.js';

export const PROTOCOL_VERSION = '1.2';

export type Mode = 'sync' | 'async' | 'stream';
export const MODES: readonly Mode[] = ['sync', 'async', 'stream'];
export type Trust = 'public' | 'authenticated' | 'trusted-peers';

export interface PublicKeyEntry {
  kid: string;
  key: string;
  active: boolean;
}

export interface SkillDef {
  id: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  modes: Mode[];
  trust: Trust;
  allowedPeers?: string[];
}

export interface RateLimit {
  requestsPerMinute: number;
  requestsPerSender: number;
  tokensPerSenderPerDay: number;
}

export interface AgentEndpoints {
  intro: string;
  message: string;
  task: string;
  taskStatus: string;
  stream: string;
  health: string;
}

export interface AgentCard {
  id: string;
  name: string;
  version: string;
  description: string;
  url: string;
  protocolVersion: string;
  specializations: string[];
  models: { provider: string; model: string }[];
  skills: SkillDef[];
  publicKeys: PublicKeyEntry[];
  auth: { schemes: ('bearer' | 'none')[] };
  rateLimit: RateLimit;
  cardTTL: number;
  endpoints: AgentEndpoints;
}

export interface Envelope {
  from: string;
  to: string;
  skill: string;
  mode: Mode;
  nonce: string;
  timestamp: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string | null;
  delegationToken?: string | null;
  auth?: { scheme: 'bearer' | 'none'; token?: string } | null;
  callbackUrl?: string | null;
  payload: Record<string, unknown>;
  /** The chain of calls this one belongs to (call-chain.ts): this bridge's extension, signed like the rest. */
  'x-agent-bridge-chain'?: CallChain;
  /** Form B only. */
  kid?: string;
  signature?: string;
}

/** A success reply; `okResponse` builds one. */
export interface OkResponse<R = unknown> {
  traceId: string;
  spanId: string;
  status: 'ok';
  result: R;
}

export function okResponse<R>(traceId: string, spanId: string, result: R): OkResponse<R> {
  return { traceId, spanId, status: 'ok', result };
}

export type TaskStatus = 'pending' | 'running' | 'done' | 'failed';

export interface TaskRecord {
  taskId: string;
  status: TaskStatus;
  progress?: number;
  result?: unknown;
  error?: { code: ErrorCode; message: string };
}

export const DEFAULT_ENDPOINTS: AgentEndpoints = {
  intro: '/agent/intro',
  message: '/agent/message',
  task: '/agent/task',
  taskStatus: '/agent/task/:taskId',
  stream: '/agent/stream',
  health: '/agent/health',
};

/**
 * `agent://host[:port]` -> host[:port], the port as a number writes it (`:0443` is `:443`: one host, one
 * sender); null when the text is not an agent id or its port is outside 1-65535.
 */
export function agentHost(id: string): string | null {
  const match = /^agent:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/.exec(id);
  if (!match) return null;
  const host = (match[1] as string).toLowerCase();
  if (match[2] === undefined) return host;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? `${host}:${port}` : null;
}

/**
 * One spelling per agent id: the host in lower case, without a trailing dot (`evil.com.`, the same DNS
 * name), the port as a number without the default https port (`agent://Evil.com:0443` is `agent://evil.com`),
 * and an IP address in its standard form (`agent://2130706433` is `agent://127.0.0.1`, as a URL reads it).
 * Ids that are not agent ids (a port outside 1-65535 included) come back unchanged.
 */
export function normalizeAgentId(id: string): string {
  const host = agentHost(id);
  if (host === null) return id;
  const port = /:\d+$/.exec(host)?.[0] ?? '';
  let name = host.slice(0, host.length - port.length).replace(/\.$/, '');
  // Only an address can be written several ways; names and dotted quads (the usual cases) skip the parser.
  if (name.startsWith('[') || (/(?:^|\.)(?:\d+|0x[0-9a-f]*)$/.test(name) && !DOTTED_QUAD.test(name)))
    name = standardAddress(name);
  return `agent://${name}${port === ':443' ? '' : port}`;
}

const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function standardAddress(host: string): string {
  try {
    return new URL(`https://${host}`).hostname;
  } catch {
    return host;
  }
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1, with or without a port or brackets. */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  // A bare IPv6 literal has colons of its own: only a bracketed one (or a name) can carry a port.
  const name = lower.includes(']') || lower.split(':').length === 2 ? lower.replace(/:\d+$/, '') : lower;
  const bare = name.replace(/^\[|\]$/g, '');
  return (
    bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare)
  );
}

/**
 * The base URL an agent id maps to (PROTOCOL.md §1): `https://<host>`; with `devHttp`, loopback ids map to
 * plain http (local testing only). Null when the text is not an agent id.
 */
export function agentBaseUrl(id: string, devHttp = false): string | null {
  const host = agentHost(id);
  if (!host) return null;
  return `${devHttp && isLoopbackHost(host) ? 'http' : 'https'}://${host}`;
}

/** The agent id for a base URL: its host, port included when not the default. */
export function agentIdForUrl(url: string): string {
  return `agent://${new URL(url).host}`;
}
