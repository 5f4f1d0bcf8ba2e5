import { performance } from 'node:perf_hooks';
import { AgentClient, ResponseVerificationError, errorCodeOf } from './client/index.js';
import { lookupWithLocalhost } from './lib/http.js';
import { escapedLine } from './lib/text.js';
import type { AgentCard, Signer } from './protocol/index.js';
import { checkReachable } from './tunnel/reachability.js';

export type StageName = 'resolve' | 'card' | 'signature' | 'gateway' | 'reply-signature';

export interface SelfTestStage {
  name: StageName;
  label: string;
  ok: boolean;
  detail: string;
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
      stages.push({
        name,
        label: LABELS[name],
        ok: false,
        detail: (error as Error).message,
        ms: elapsed(t0),
      });
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
  const ok =
    (await stage('resolve', async () => {
      const addresses = await new Promise<string[]>((resolve, reject) =>
        lookupWithLocalhost(host, { all: true }, (error, found) =>
          error
            ? reject(new Error(`${host} does not resolve (${error.code ?? error.message})`))
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
        // One gateway call only (each costs a run): a bad reply signature is kept for its own stage.
        if (!(error instanceof ResponseVerificationError) || error.status === undefined) throw error;
        reply = { status: error.status, body: error.body };
        badSignature = error.message;
      }
      if (reply.status === 401 || reply.status === 403) throw new Error(`refused: ${refusal(reply.body)}`);
      if (reply.status >= 400 && reply.status !== 502 && reply.status !== 503)
        throw new Error(`HTTP ${reply.status}: ${refusal(reply.body)}`);
      return `HTTP ${reply.status}`;
    })) &&
    (await stage('gateway', async () => {
      if (reply?.status !== 200) {
        // Why, as the operator reads it: the agent callers may not reach, else the gateway's current problem.
        const problem = target.gatewayProblem();
        throw new Error(problem ? `${problem.diagnosis} Fix: ${problem.fix}` : refusal(reply?.body));
      }
      const text = (reply.body as { result?: { reply?: unknown } } | null)?.result?.reply;
      return `replied: ${typeof text === 'string' ? escapedLine(text, 120) : '(no reply text)'}`;
    })) &&
    (await stage('reply-signature', async () => {
      // Checked against the card fetched through the public URL, as any caller would.
      if (badSignature) throw new Error(badSignature);
      return 'signed with an active key listed in the card';
    }));
  return { ok, url, stages, totalMs: elapsed(started) };
}

const elapsed = (t0: number) => Math.round(performance.now() - t0);

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
