import { performance } from 'node:perf_hooks';
import { AgentClient, CardFetchError, ResponseVerificationError, errorCodeOf } from './client/index.js';
import { lookupWithLocalhost } from './lib/http.js';
import { escapedLine } from './lib/text.js';
import { ed25519, type AgentCard, type Signer } from './protocol/index.js';
import { checkReachable, codeOf } from './tunnel/reachability.js';
import { httpStatusFailure, networkFailure, UnreachableError } from './tunnel/unreachable.js';

export type StageName = 'resolve' | 'card' | 'signature' | 'gateway' | 'reply-signature';

export interface SelfTestStage {
  name: StageName;
  label: string;
  ok: boolean;
  detail: string;
  /** A failed stage: what to do about it. */
  fix?: string;
  ms: number;
}

export interface SelfTestReport {
  ok: boolean;
  url: string;
  stages: SelfTestStage[];
  totalMs: number;
}

const LABELS: Record<StageName, string> = {
  resolve: 'Public URL resolves',
  card: 'Card fetched through the public URL and matches',
  signature: 'Signed request accepted',
  gateway: 'Gateway answered',
  'reply-signature': 'Reply signature verifies',
};

/** What the self-test calls, and with what. */
export interface SelfTestTarget {
  /** The public URL (or the local one without a tunnel). */
  url: string;
  card: AgentCard;
  signer: Signer;
  timeoutMs: number;
  /** Why callers get no reply, as the operator reads it (the agent callers reach, else the gateway). */
  gatewayProblem(): { diagnosis: string; fix: string } | undefined;
}

/**
 * Proves end to end that a stranger reaches the agent: a signed `chat` call to ourselves through the public
 * URL, made with the project's client and our own identity, reported stage by stage. Stops at the first
 * failed stage; the later ones are reported as not run.
 */
export async function runSelfTest(
  target: SelfTestTarget,
  message = 'Agent Bridge self-test: please answer with a short greeting.',
): Promise<SelfTestReport> {
  const started = performance.now();
  const { url, card } = target;
  const stages: SelfTestStage[] = [];
  const stage = async (name: StageName, run: () => Promise<string>): Promise<boolean> => {
    const t0 = performance.now();
    try {
      const detail = await run();
      stages.push({ name, label: LABELS[name], ok: true, detail, ms: elapsed(t0) });
      return true;
    } catch (error) {
      const { detail, fix } = failureOf(error);
      stages.push({ name, label: LABELS[name], ok: false, detail, fix, ms: elapsed(t0) });
      return false;
    }
  };

  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  let reply: { status: number; body: unknown } | undefined;
  let badSignature: string | undefined;
  const client = new AgentClient({
    id: card.id,
    signer: target.signer,
    resolveBaseUrl: () => url,
    devHttp: new URL(url).protocol === 'http:',
    timeoutMs: target.timeoutMs,
  });
  const messageUrl = `${url.replace(/\/+$/, '')}/agent/message`;
  const ok =
    (await stage('resolve', async () => {
      const addresses = await new Promise<string[]>((resolve, reject) =>
        lookupWithLocalhost(host, { all: true }, (error, found) =>
          error
            ? reject(
                new Failure(
                  `${host} does not resolve (${codeOf(error) ?? 'no address'})`,
                  networkFailure(host, 'ENOTFOUND').fix,
                ),
              )
            : resolve((found as unknown as { address: string }[]).map((a) => a.address)),
        ),
      );
      return `${host} -> ${addresses.join(', ')}`;
    })) &&
    (await stage('card', async () => {
      await checkReachable(url, card);
      return `${url}/.well-known/agent.json serves ${card.id}`;
    })) &&
    (await stage('signature', async () => {
      try {
        reply = await client.call(card.id, 'chat', { message, channel: 'self-test' });
      } catch (error) {
        // The call fetches the card again: that it failed says nothing about this agent being a SAMVAD
        // agent (the card stage just proved it), only that the address did not answer this time.
        if (error instanceof CardFetchError) throw await cardAgain(url, card);
        // One gateway call only (each costs a run): a bad reply signature is kept for its own stage.
        if (!(error instanceof ResponseVerificationError) || error.status === undefined) {
          throw callFailure(messageUrl, error, target.timeoutMs);
        }
        reply = { status: error.status, body: error.body };
        badSignature = error.message;
      }
      // No valid signature on an error: a server on the way answered (the tunnel's 408 or 504), not this agent.
      if (badSignature && reply.status >= 400) throw httpStatusFailure(messageUrl, reply.status);
      if (reply.status === 429) {
        throw new Failure(
          `refused: ${refusal(reply.body)}`,
          "This agent's own rate limits refused the call: wait a minute, or raise them in Settings → Rate limits",
        );
      }
      if (reply.status === 401 || reply.status === 403)
        throw new Failure(`refused: ${refusal(reply.body)}`, SEE_TRAFFIC(card.id));
      if (reply.status >= 400 && reply.status !== 502 && reply.status !== 503)
        throw new Failure(`HTTP ${reply.status}: ${refusal(reply.body)}`, SEE_TRAFFIC(card.id));
      return `HTTP ${reply.status}`;
    })) &&
    (await stage('gateway', async () => {
      if (reply?.status !== 200) {
        // Why, as the operator reads it: the agent callers may not reach, else the gateway's current problem.
        const problem = target.gatewayProblem();
        if (problem) throw new Failure(problem.diagnosis, problem.fix);
        throw new Failure(refusal(reply?.body), SEE_TRAFFIC(card.id));
      }
      const text = (reply.body as { result?: { reply?: unknown } } | null)?.result?.reply;
      return `replied: ${typeof text === 'string' ? escapedLine(text, 120) : '(no reply text)'}`;
    })) &&
    (await stage('reply-signature', async () => {
      // Checked against the card fetched through the public URL, as any caller would.
      if (badSignature) {
        throw new Failure(
          badSignature,
          'Another copy of this agent with other keys may answer at this address, or the keys changed during the test: run it again, and stop any other copy',
        );
      }
      return `signed with an active key listed in the card; ${ED25519_HERE[ed25519.name]}`;
    }));
  return { ok, url, stages, totalMs: elapsed(started) };
}

// Which library signs and verifies here: the operator sees the slower fallback without reading a log.
const ED25519_HERE: Record<typeof ed25519.name, string> = {
  libsodium: 'Ed25519 by libsodium',
  'node:crypto':
    "Ed25519 by node:crypto: libsodium's addon did not load here (the same signatures, at about half the speed); reinstall Agent Bridge, or run npm ci in a checkout, to bring it back",
};

const elapsed = (t0: number) => Math.round(performance.now() - t0);

/** A stage that failed: what happened, and what to do. */
class Failure extends Error {
  constructor(
    readonly detail: string,
    readonly fix: string,
  ) {
    super(detail);
  }
}

const SEE_TRAFFIC = (id: string) =>
  `Traffic shows the step that refused it: the newest refused call from ${id} (this agent itself)`;

function failureOf(error: unknown): { detail: string; fix?: string } {
  if (error instanceof Failure || error instanceof UnreachableError)
    return { detail: error.detail, fix: error.fix };
  return { detail: (error as Error).message };
}

/** The signed call could not fetch the card the card stage had just fetched: what the address does now. */
async function cardAgain(url: string, card: AgentCard): Promise<Failure> {
  const what = "the signed call could not fetch this agent's card through the public URL";
  try {
    await checkReachable(url, card);
  } catch (error) {
    if (error instanceof UnreachableError) return new Failure(`${what}: ${error.detail}`, error.fix);
    throw error;
  }
  return new Failure(
    `${what}, though it could a moment before and again just now`,
    'The address is unsteady: run the test again; if it keeps failing, stop and start the tunnel (Overview → Tunnel)',
  );
}

/** The call to /agent/message got no answer: a timeout (the gateway's turn is part of it) or no connection. */
function callFailure(messageUrl: string, error: unknown, timeoutMs: number): Error {
  if (causes(error).some((cause) => (cause as Error).name === 'TimeoutError')) {
    return new Failure(
      `${messageUrl} sent no answer within ${Math.round(timeoutMs / 1000)} s`,
      'The call waits for the gateway’s reply: if the Gateway card shows no problem, its agent is slow; raise Settings → Gateway → Timeout, or run the test again',
    );
  }
  const code = codeOf(error);
  return code ? networkFailure(messageUrl, code) : (error as Error);
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current && chain.length < 4; current = (current as { cause?: unknown }).cause)
    chain.push(current);
  return chain;
}

/**
 * An error reply in the operator's words: the reply crossed the tunnel, so the tunnel (or anyone between) wrote
 * it. Its code only when it is a published one; its message on one line, capped and escaped.
 */
function refusal(body: unknown): string {
  const { error, message } = (body ?? {}) as { error?: { message?: unknown }; message?: unknown };
  const said = error?.message ?? message;
  const code = errorCodeOf(body) ?? 'no published error code';
  return typeof said === 'string' ? `${code}: ${escapedLine(said, 300)}` : code;
}
