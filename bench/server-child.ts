// Entry of a server child process: hosts the agent, the echo server or the instant gateway away from the
// load generator, so that each has a core of its own to use and is measured on its own (CPU, memory).
// Started by bench/child-host.ts with an IPC channel.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type {
  ChildConfig,
  ChildMemory,
  ChildMessage,
  ChildRequest,
  ChildSample,
  HrtimeNs,
} from './child-protocol.js';
import type { AgentBridgeApp } from '../src/app.js';
import type { TunnelState } from '../src/tunnel/state.js';
import { Samples, summarize } from './stats.js';
import type { LocalCallLimits } from '../src/state/call-limits.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
let clockOffset = 0;

const tell = (message: ChildMessage, then?: () => void) => process.send?.(message, undefined, {}, then);
const hrtime = (): HrtimeNs => String(process.hrtime.bigint());

/** How long a tunnelled agent may take to come online before it reports ready without a public URL. */
const TUNNEL_ONLINE_TIMEOUT_MS = 15_000;

// Each role loads only its own modules, so that a child's memory is its server's and not the others'.
async function start() {
  switch (config.role) {
    case 'agent': {
      const { startBenchAgent } = await import('./bench-agent.js');
      const agent = await startBenchAgent({
        gatewayUrl: config.gatewayUrl,
        gatewayToken: config.gatewayToken,
        approved: config.approved,
        tunnelHost: config.tunnelHost,
        redisUrl: config.redisUrl,
        now: () => Date.now() + clockOffset,
      });
      if (config.tunnelHost) {
        agent.app.on('tunnel', (state) => tell({ type: 'tunnel', state, at: hrtime(), wallMs: Date.now() }));
        await untilOnline(agent.app, TUNNEL_ONLINE_TIMEOUT_MS);
      }
      if (!config.console) return { agent, url: agent.url, close: () => agent.close() };
      // As `serve` does: the console on loopback, a settings store in the agent's data dir, a free port.
      const [{ startConsole }, { openSettingsStore }] = await Promise.all([
        import('../src/console/console-server.js'),
        import('../src/settings/store.js'),
      ]);
      const store = openSettingsStore(agent.dataDir);
      const opened = await startConsole({ app: agent.app, store, dataDir: agent.dataDir, port: 0 });
      const close = async () => {
        await opened.close();
        await agent.close();
      };
      return { agent, url: agent.url, console: { url: opened.url, token: opened.token }, close };
    }
    case 'echo':
      return (await import('./echo-server.js')).startEchoServer();
    case 'sdk-a2a':
      return (await import('./sdk-a2a-server.js')).startSdkA2AServer(config.gatewayUrl, config.gatewayToken);
    case 'gateway':
      return (await import('./instant-gateway.js')).startInstantGateway(config.token);
    case 'tunnel': {
      const { startTunnelServer } = await import('../test/fixtures/tunnel-server.js');
      const tunnelServer = await startTunnelServer({ maxConnCount: config.maxConnCount });
      return { tunnelServer, url: tunnelServer.url, close: () => tunnelServer.close() };
    }
    case 'idle':
      return { url: '', close: () => Promise.resolve() };
  }
}

/** Resolves once the app's tunnel is online, or after `timeoutMs` (the ready message then says why not). */
function untilOnline(app: AgentBridgeApp, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (app.tunnelState.status === 'online') return resolve();
    const done = () => {
      clearTimeout(timer);
      app.off('tunnel', onState);
      resolve();
    };
    const onState = (state: TunnelState) => state.status === 'online' && done();
    const timer = setTimeout(done, timeoutMs);
    app.on('tunnel', onState);
  });
}

const server = await start();
const agent = 'agent' in server ? server.agent : undefined;
const tunnelServer = 'tunnelServer' in server ? server.tunnelServer : undefined;
const consoleRef = 'console' in server ? server.console : undefined;

let handled = new Samples();
agent?.app.on('envelope', (event) => {
  if (event.verdict === 'accepted') handled.push(event.durationMs);
});
let cpuMark = process.cpuUsage();
let gcUs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcUs += entry.duration * 1000;
}).observe({ entryTypes: ['gc'] });

function sample(): ChildSample {
  const cpu = process.cpuUsage(cpuMark);
  cpuMark = process.cpuUsage();
  const result: ChildSample = { userUs: cpu.user, systemUs: cpu.system, gcUs };
  gcUs = 0;
  if (agent) result.handled = summarize(handled.values());
  handled = new Samples();
  return result;
}

function memory(): ChildMemory {
  const usage = process.memoryUsage();
  const status = procStatus();
  const result: ChildMemory = {
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    arrayBuffers: usage.arrayBuffers,
    peakRss: status.VmHWM,
    anonRss: status.RssAnon,
  };
  if (agent) {
    result.nonces = (agent.app.server.limits as LocalCallLimits).nonces.size;
    result.nonceLogBytes = statSync(join(agent.dataDir, 'nonces.log')).size;
  }
  return result;
}

// Linux only: VmHWM is the highest resident set the process has had; RssAnon leaves out mapped files
// (the node binary and shared libraries, which other processes share).
function procStatus(): { VmHWM?: number; RssAnon?: number } {
  let text = '';
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return {};
  }
  const kb = (field: string) => {
    const value = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1];
    return value === undefined ? undefined : Number(value) * 1024;
  };
  return { VmHWM: kb('VmHWM'), RssAnon: kb('RssAnon') };
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

process.on('message', (raw) => {
  const request = raw as ChildRequest;
  const reply = (fields: Omit<Extract<ChildMessage, { type: 'reply' }>, 'type' | 'seq'> = {}) =>
    tell({ type: 'reply', seq: request.seq, ...fields });
  switch (request.cmd) {
    case 'memory':
      return reply({ memory: memory() });
    case 'gc':
      collectGarbage();
      return reply({ memory: memory() });
    case 'sample':
      return reply({ sample: sample() });
    case 'reset-peak':
      // Linux: 5 resets the process's peak resident set size (proc(5), clear_refs).
      try {
        writeFileSync('/proc/self/clear_refs', '5');
      } catch {
        // No /proc: the peak stays the one since start, which the report then shows.
      }
      return reply({ memory: memory() });
    case 'sweep':
      // Every nonce expires one window after its envelope's timestamp: move the clock past that.
      clockOffset += request.advanceMs;
      (agent?.app.server.limits as LocalCallLimits | undefined)?.nonces.sweep();
      clockOffset = 0;
      collectGarbage();
      return reply({ memory: memory() });
    case 'tunnel-stop':
    case 'tunnel-start': {
      if (!tunnelServer) return reply({ error: `${request.cmd} needs the tunnel server role` });
      const calledAt = hrtime();
      const call = request.cmd === 'tunnel-stop' ? tunnelServer.stop() : tunnelServer.start();
      return void call.then(
        () => reply({ calledAt, doneAt: hrtime() }),
        (error: Error) => reply({ error: error.message }),
      );
    }
    case 'stop':
      void server.close().then(
        // A clean exit, so that --cpu-prof writes its profile.
        () => tell({ type: 'reply', seq: request.seq }, () => process.exit(0)),
        (error: Error) => reply({ error: error.message }),
      );
  }
});
// The bench process went away: never outlive it.
process.on('disconnect', () => process.exit(0));

const tunnelState = config.role === 'agent' && config.tunnelHost ? agent?.app.tunnelState : undefined;
tell({
  type: 'ready',
  url: server.url,
  // The card's id as it is now: the public one when the tunnel is online.
  id: agent?.app.card().id,
  ...(agent && 'a2aKey' in agent ? { a2aKey: agent.a2aKey } : {}),
  pid: process.pid,
  ...(tunnelState ? { tunnel: tunnelState } : {}),
  ...(tunnelState?.status === 'online' ? { publicUrl: tunnelState.url } : {}),
  ...(consoleRef ? { console: consoleRef } : {}),
});
