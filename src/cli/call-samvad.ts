// `agent-bridge call` over SAMVAD: a signed `chat` call with the project's client (src/client, as the MCP
// tools call), sync or streamed, the reply's signature checked against the called agent's card.
import { AgentCallError, AgentClient, ResponseVerificationError, baseUrlFor } from '../client/index.js';
import { appFetch, readCapped } from '../lib/http.js';
import { printable } from '../lib/text.js';
import { checkSkill } from '../mcp/callee-answers.js';
import { OutboundError, parseAgentRef } from '../mcp/outbound-policy.js';
import {
  agentHost,
  isLoopbackHost,
  normalizeAgentId,
  parseSignatureHeaders,
  type ErrorCode,
} from '../protocol/index.js';
import type { CallerIdentity } from './call-identity.js';

/** Where the reply goes: its text as it arrives, then what was checked. */
export interface CallOutput {
  reply(text: string): void;
  note(text: string): void;
}

export interface SamvadCall {
  /** An agent:// id or a base URL (plain http only to this machine's loopback). */
  target: string;
  message: string;
  stream: boolean;
  timeoutMs: number;
  caller: CallerIdentity;
  out: CallOutput;
}

export async function callSamvad(call: SamvadCall): Promise<void> {
  const { caller, out } = call;
  const asked = ourWords(() => parseAgentRef(call.target, true));
  // Plain http to this machine only: the operator named the address, and nothing leaves the machine.
  const base = baseUrlFor(asked, { devHttp: true });
  const to = await idServedAt(asked, base);
  const client = new AgentClient({
    id: caller.id,
    signer: caller.signer,
    devHttp: true,
    // The agent named by its loopback address may have another id (its tunnel's): reached here all the same.
    resolveBaseUrl: (id) => (id === to ? base : baseUrlFor(id, { devHttp: true })),
    timeoutMs: call.timeoutMs,
    // Agents built on the SAMVAD SDKs sign no replies: shown, and said to be unsigned.
    acceptUnsigned: true,
  });
  const mode = call.stream ? 'stream' : 'sync';
  try {
    const card = await client.fetchCard(to);
    ourWords(() => checkSkill(to, card, 'chat', mode));
    const payload = { message: call.message };
    if (!call.stream) {
      const result = await client.call(to, 'chat', payload);
      const body = result.body as { status?: unknown; result?: { reply?: unknown } } | null;
      if (result.status !== 200 || body?.status !== 'ok') {
        throw new Error(refusal(to, caller.id, result.status, body, result.headers.get('retry-after')));
      }
      out.reply(replyText(body.result?.reply));
      const kid = signedKid(result.headers);
      out.note(checked(caller, to, base, result.verified ? kid : undefined, false));
      return;
    }
    let streamed = '';
    let final: { reply: string; kid: string | undefined } | undefined;
    for await (const event of client.stream(to, 'chat', payload)) {
      const data = event.data as {
        chunk?: unknown;
        result?: { reply?: unknown };
        kid?: unknown;
        status?: unknown;
      } | null;
      if (event.event === undefined && typeof data?.chunk === 'string') {
        streamed += data.chunk;
        out.reply(data.chunk);
      } else if (event.event === 'result') {
        const kid = event.verified && typeof data?.kid === 'string' ? data.kid : undefined;
        final = { reply: replyText(data?.result?.reply), kid };
      } else if (event.event === 'error') {
        throw new Error(refusal(to, caller.id, 502, data, null));
      } else if (event.event === 'done') break;
    }
    if (!final) throw new Error(`The stream from ${to} ended without its reply: try the call again.`);
    // The pieces are not signed; the final event is, and holds the whole reply: they must agree.
    if (streamed === '') out.reply(final.reply);
    else if (streamed !== final.reply) {
      throw new Error(
        `The streamed text from ${to} differs from the reply its signed final event holds: do not trust the ` +
          'text above. Call again, without --stream to see the signed reply only.',
      );
    }
    out.note(checked(caller, to, base, final.kid, true));
  } catch (error) {
    if (error instanceof AgentCallError)
      throw new Error(refusal(to, caller.id, error.status, error.body, null), { cause: error });
    if (error instanceof ResponseVerificationError) {
      throw new Error(
        `The reply from ${to} does not verify against its card, so it is not shown: it was changed on the ` +
          "way, or the card no longer lists the key that signed it. Call again; if it persists, tell the agent's operator.",
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * The id the agent at a loopback address has: the card there says (behind a tunnel, the tunnel's). Any other
 * address is its own id; the client checks that the card it fetches there says so.
 */
async function idServedAt(asked: string, base: string): Promise<string> {
  if (!isLoopbackHost(agentHost(asked) ?? '')) return asked;
  let response: Response;
  try {
    const url = `${base}/.well-known/agent.json`;
    response = (await appFetch(url, { signal: AbortSignal.timeout(5000) })) as unknown as Response;
  } catch (error) {
    const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
    throw new Error(
      `Cannot reach ${base} (${typeof code === 'string' ? code : 'no answer'}): is the agent running, and is ${asked} its address? ` +
        'The start banner of `serve` prints it (Agent URL).',
      { cause: error },
    );
  }
  try {
    const card = JSON.parse(Buffer.from(await readCapped(response, 64 * 1024)).toString('utf8')) as {
      id?: unknown;
    };
    if (typeof card.id === 'string' && agentHost(card.id)) return normalizeAgentId(card.id);
  } catch {
    // Not a card: the client's own fetch says so below, in its words.
  }
  return asked;
}

/** The parsers' refusals (an id or URL that is not one) in their own words. */
function ourWords<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof OutboundError) throw new Error(error.message, { cause: error });
    throw error;
  }
}

function replyText(reply: unknown): string {
  return typeof reply === 'string' ? reply : JSON.stringify(reply ?? null);
}

/** The key a signed reply names (Signature-Input's keyid). */
function signedKid(headers: Headers): string | undefined {
  const parsed = parseSignatureHeaders(headers.get('signature-input') ?? '', headers.get('signature') ?? '');
  return typeof parsed === 'string' ? undefined : parsed.kid;
}

/** What was sent and what was checked, for the operator (after the reply). */
function checked(
  caller: CallerIdentity,
  to: string,
  base: string,
  kid: string | undefined,
  stream: boolean,
): string {
  const self = caller.id === to ? ' (the agent itself: no approval needed)' : '';
  const sent = `Sent as ${caller.id}${self}, signed with its key ${caller.signer.kid}.`;
  if (kid) {
    const what = stream ? 'its final event, which holds the whole streamed reply, is signed' : 'signed';
    return `${sent}\nReply verified: ${what} by ${to} with its key ${printable(kid)}, active on its card (${base}/.well-known/agent.json).`;
  }
  const carrier = base.startsWith('https:') ? `TLS to ${new URL(base).host}` : 'this machine (loopback)';
  return `${sent}\nThe reply carries no signature (agents built on the SAMVAD SDKs sign none): it is as authentic as ${carrier}.`;
}

/** A refusal: the code, the agent's own words (quoted, escaped), and what to do about it. */
function refusal(to: string, from: string, status: number, body: unknown, retryAfter: string | null): string {
  const record = (body ?? {}) as {
    code?: unknown;
    message?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  const code = (record.error?.code ?? record.code) as ErrorCode | undefined;
  const words = record.error?.message ?? record.message;
  const said = typeof words === 'string' && words ? ` It said: "${printable(words.slice(0, 300))}".` : '';
  const fix = fixFor(typeof code === 'string' ? code : undefined, status, from, to, retryAfter);
  return `${to} refused the call (HTTP ${status}${typeof code === 'string' ? ` ${printable(code)}` : ''}).${said}${fix ? ` ${fix}` : ''}`;
}

function fixFor(
  code: string | undefined,
  status: number,
  from: string,
  to: string,
  retryAfter: string | null,
): string {
  if (code === 'AUTH_FAILED' && status === 403) {
    return `Its operator has not approved your agent (${from}) yet: ask them to approve it on their console's Access page (the message has your request code), then call again.`;
  }
  if (code === 'AUTH_FAILED' && from !== to && isLoopbackHost(agentHost(from) ?? '')) {
    return (
      `It could not check your signature: your agent's id, ${from}, is a loopback address. An agent takes a ` +
      "caller's key from the caller's card over https, and fetches a loopback id's card over plain http only " +
      'with --dev-http-peers (testing only: with it, any caller could point it at ports on its own machine). ' +
      `So start the agent you call with --dev-http-peers, or pin your key there with --trust-peer ${from}=<your ` +
      'public key>; or give your agent a public address (a tunnel). An agent calling itself needs neither.'
    );
  }
  if (code === 'AUTH_FAILED') {
    return `It could not verify your signature against your agent's card: check that ${from} serves it (console > Overview > Self-test).`;
  }
  if (code === 'RATE_LIMITED' || code === 'TOKEN_BUDGET_EXCEEDED')
    return `Call again ${retryAfter && /^\d+$/.test(retryAfter) ? `in ${retryAfter} s` : 'later'}.`;
  if (code === 'AGENT_UNAVAILABLE')
    return 'Its gateway did not answer: call again later, or tell its operator.';
  if (code === 'INJECTION_DETECTED') return 'Its injection screen refused the message: reword it.';
  if (code === 'SKILL_NOT_FOUND') return 'It has no chat skill: `call` speaks to chat agents only.';
  return '';
}
