/**
 * What the operator allows their own agent to call through the bridge (the MCP tools): pure checks, in the
 * order the tools apply them. A refusal names the setting that refused and how to change it.
 */
import { unfetchableReason } from '../agent/card-fetch.js';
import {
  agentBaseUrl,
  agentHost,
  isLoopbackHost,
  normalizeAgentId,
  type ErrorCode,
  type ReplySignature,
  type Verdict,
} from '../protocol/index.js';
import { outboundTargetId } from '../settings/agent-ids.js';
import type { OutboundPolicy } from '../settings/schema.js';
import type { UntrustedPart } from './untrusted.js';

export interface OutboundSettings {
  outbound: OutboundPolicy;
  outboundAllowed: readonly string[];
  outboundPerMinute: number;
  outboundTimeoutMs: number;
  outboundMaxReplyBytes: number;
  outboundRequireSignedReplies: boolean;
  devHttpPeers: boolean;
  keepMessageContents: boolean;
}

/**
 * A refusal before anything leaves the machine, or a failure on the way: what the log and the model get.
 * The message is the bridge's own words (see untrusted.ts); what the callee wrote goes in `untrusted`.
 */
export class OutboundError extends Error {
  constructor(
    /** The log's verdict: the policy step, the callee's refusing step, or `handler`. */
    readonly verdict: Exclude<Verdict, 'accepted'>,
    /** The callee's HTTP status, or the one that best says what happened here (403, 429, 502, 504). */
    readonly status: number,
    message: string,
    readonly details: {
      /** The agent called (its id once parsed); set by the caller of the policy. */
      agent?: string;
      /** The callee's SAMVAD error code, when it answered with a published one. */
      code?: ErrorCode;
      /** The callee's own values (its message, a code outside the published set): shown only in a block. */
      untrusted?: UntrustedPart[];
      /** The reply's signature, when a reply was read (for the log). */
      replySignature?: ReplySignature;
      /** The reply was read but not used (a signature that did not check, or unsigned when that is refused). */
      discarded?: true;
      /** What the tool says about the signature of a refusal it shows (reply-signature.ts). */
      replyNote?: string;
      /** A task that was accepted before the failure (a checked id): the caller may still poll it. */
      taskId?: string;
      /** Refused by the per-minute cap on outbound requests. */
      capReached?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

const refuse = (verdict: 'access' | 'shape', status: number, message: string) =>
  new OutboundError(verdict, status, message);

/**
 * The agent:// id for what a model passed as `agent`: an id, or the agent's https base URL (a path is
 * allowed only when it is the card's own path). Plain http only for loopback, and only with devHttpPeers.
 */
export function parseAgentRef(input: string, devHttpPeers: boolean): string {
  const text = input.trim();
  if (text.toLowerCase().startsWith('agent://')) {
    const host = agentHost(text);
    if (!host)
      throw refuse(
        'shape',
        400,
        `"${clip(text)}" is not an agent id: use agent://host or agent://host:port.`,
      );
    return normalizeAgentId(`agent://${host}`);
  }
  return baseUrlHost(
    text,
    devHttpPeers,
    '/.well-known/agent.json',
    `"${clip(text)}" is neither an agent id nor a URL: use agent://host (for example agent://example.com) or https://host.`,
    (origin, host) =>
      `SAMVAD agents live at the root of their host: use ${origin} (or agent://${host}), not a path.`,
  );
}

/** An A2A agent as the bridge names it: its origin (what requests go to) and the agent:// id of its host. */
export interface A2AAgentRef {
  /** `https://host[:port]`; `http://` for a loopback host under devHttpPeers. */
  origin: string;
  /** The same host as an agent:// id: what the outbound policy and `outboundAllowed` compare. */
  agentId: string;
}

/**
 * The A2A agent a model named by its https base URL (or its card's URL, /.well-known/agent-card.json): the
 * card and every call are found from there. Plain http only for loopback, and only with devHttpPeers.
 */
export function parseA2AAgent(input: string, devHttpPeers: boolean): A2AAgentRef {
  const text = input.trim();
  if (text.toLowerCase().startsWith('agent://')) {
    throw refuse(
      'shape',
      400,
      'A2A agents are named by their https base URL (https://host), not by an agent:// id: agent:// ids name ' +
        'SAMVAD agents (samvad_agent_card, samvad_call).',
    );
  }
  const agentId = baseUrlHost(
    text,
    devHttpPeers,
    '/.well-known/agent-card.json',
    `"${clip(text)}" is not a URL: name an A2A agent by its https base URL, for example https://agent.example.com.`,
    (origin) =>
      `An A2A agent's card is at the root of its host (/.well-known/agent-card.json): use ${origin}, not a path.`,
  );
  return { origin: agentBaseUrl(agentId, devHttpPeers) as string, agentId };
}

/**
 * The agent:// id of an agent's base URL: https (plain http for loopback with devHttpPeers), no credentials,
 * query or fragment, and no path but the root or `cardPath`.
 */
function baseUrlHost(
  text: string,
  devHttpPeers: boolean,
  cardPath: string,
  notUrl: string,
  notRoot: (origin: string, host: string) => string,
): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('shape', 400, notUrl);
  }
  const plainLoopback = url.protocol === 'http:' && devHttpPeers && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !plainLoopback) {
    throw refuse('access', 403, `${url.origin} is not https: agents are reached over https only.`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw refuse(
      'shape',
      400,
      `Give the agent's base URL (https://host), without credentials, query or fragment.`,
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (path !== '' && path !== cardPath) throw refuse('shape', 400, notRoot(url.origin, url.host));
  const id = `agent://${url.host.toLowerCase()}`;
  if (!agentHost(id)) throw refuse('shape', 400, `"${clip(text)}" does not name an agent host.`);
  return normalizeAgentId(id);
}

/**
 * The operator's policy for one target: outbound off, not on the allowlist, or an address the bridge must
 * never reach (private, link-local, loopback without devHttpPeers: SSRF through the operator's agent).
 */
export function checkOutboundPolicy(settings: OutboundSettings, agentId: string, name = agentId): void {
  if (settings.outbound === 'off') {
    throw refuse(
      'access',
      403,
      'The operator has turned calls to other agents off (setting outbound: off). Tell the operator if you ' +
        'need this call; they can allow it on the console (Access > Calls out) or with --outbound.',
    );
  }
  if (
    settings.outbound === 'allowlist' &&
    !settings.outboundAllowed.some((allowed) => outboundTargetId(allowed) === agentId)
  ) {
    throw refuse(
      'access',
      403,
      `${name} is not on the operator's list of agents this agent may call (setting outbound: allowlist). ` +
        'Tell the operator if you need it; they can add it on the console (Access > Calls out).',
    );
  }
  const unreachable = unfetchableReason(agentId, settings.devHttpPeers);
  if (unreachable) {
    throw refuse(
      'access',
      403,
      `${name} cannot be called: ${unreachable}. Agents are reached at public https addresses only.`,
    );
  }
}

/** A sliding one-minute window over outbound HTTP requests (each card fetch, call, poll), all agents together. */
export class OutboundRateWindow {
  private readonly times: number[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes one slot, or throws the refusal with when the next slot frees. */
  take(perMinute: number): void {
    const now = this.now();
    while (this.times.length > 0 && (this.times[0] as number) <= now - 60_000) this.times.shift();
    if (this.times.length >= perMinute) {
      const wait = Math.max(1, Math.ceil(((this.times[0] as number) + 60_000 - now) / 1000));
      throw new OutboundError(
        'rate-limit',
        429,
        `Too many requests to other agents: the operator allows ${perMinute} a minute (setting outboundPerMinute; ` +
          `every card fetch, call and task poll counts). Try again in ${wait} s.`,
        { capReached: true },
      );
    }
    this.times.push(now);
  }
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}...` : text;
}
