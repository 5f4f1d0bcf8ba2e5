// `npm run bench:compare -- --before DIR [--after DIR] [--blocks N] [--run-ms MS]`: one tree's agent against
// another's (DIR: a checkout or worktree of an earlier commit, with node_modules; --after defaults to this
// tree), in one run. Both agents run
// at once, each in a child process built from its own tree, on the same pinned CPU, behind the same instant
// gateway and called by the same load generator; the rounds alternate (before, after, after, before), so a
// drift of the machine weighs on both sides alike. Runs minutes apart on this machine differ by more than a
// change does (see bench/README.md): this is how "no loss" is measured.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildServerChild } from './build-child.js';
import { spawnServer, useBuiltChild } from './child-host.js';
import { measure, type Measured } from './measure.js';
import { pinPlan, pinSelf, unpinSelf } from './pinning.js';
import { a2aMessage, signedChat } from './requests.js';
import { benchCaller, checkA2ASend, checkSignedChat, startAgentChild } from './setup.js';
import { median } from './stats.js';
import { startAgent } from '../test/helpers/agents.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    blocks: { type: 'string', default: '3' },
    'run-ms': { type: 'string', default: '2000' },
  },
});
if (!values.before || !existsSync(join(values.before, 'bench/server-child.ts'))) {
  console.error('Usage: npm run bench:compare -- --before DIR (a checkout of an earlier commit with bench/)');
  process.exit(2);
}
const beforeDir = resolve(values.before);
const afterDir = resolve(values.after ?? new URL('..', import.meta.url).pathname);
const blocks = Number(values.blocks);
const runMs = Number(values['run-ms']);

const pin = pinPlan();
if (pin) pinSelf(pin.client);
const gatewayChild = await spawnServer(
  { role: 'gateway', token: 'bench-gateway-token' },
  { cpu: pin?.client },
);
const gateway = { url: gatewayChild.url, token: 'bench-gateway-token' };
const peer = await startAgent({ settings: { gatewayUrl: gateway.url, gatewayToken: gateway.token } });
const caller = benchCaller(peer);
const spawnAgent = async (child: string) => {
  useBuiltChild(child);
  const agent = await startAgentChild(gateway, { cpu: pin?.server, approved: [peer.id] });
  await checkSignedChat(agent.url, caller, agent.id);
  await checkA2ASend(agent.url, agent.a2aKey);
  return agent;
};
const sides = {
  before: await spawnAgent(await buildServerChild(beforeDir, join(beforeDir, 'dist/bench-compare'))),
  after: await spawnAgent(await buildServerChild(afterDir, join(afterDir, 'dist/bench-compare'))),
};

const rows = [
  { name: 'signed chat, c=32', concurrency: 32, a2a: false },
  { name: 'signed chat, c=1', concurrency: 1, a2a: false },
  { name: 'A2A blocking send, c=32', concurrency: 32, a2a: true },
  { name: 'A2A blocking send, c=1', concurrency: 1, a2a: true },
];
console.log(
  `before: ${beforeDir}\nafter:  ${afterDir}\n${blocks} blocks of before, after, after, before; ${runMs} ms runs\n`,
);
console.log(
  'row                          before req/s  after req/s  ratio   before CPU/call  after CPU/call  ratio  non-200',
);
try {
  for (const row of rows) {
    const runs = { before: [] as Measured[], after: [] as Measured[] };
    for (let block = 0; block < blocks; block++) {
      for (const side of ['before', 'after', 'after', 'before'] as const) {
        const agent = sides[side];
        const prepare = row.a2a ? a2aMessage(agent.a2aKey) : signedChat(caller, agent.id);
        const phase = { concurrency: row.concurrency, warmupMs: 500, durationMs: runMs };
        runs[side].push(await measure(agent, prepare, phase));
      }
    }
    const rps = (side: 'before' | 'after') => median(runs[side].map((r) => r.rps));
    const cpu = (side: 'before' | 'after') => median(runs[side].map((r) => r.server.cpuUsPerCall));
    const bad = [...runs.before, ...runs.after].reduce((n, r) => n + r.errors, 0);
    console.log(
      `${row.name.padEnd(28)} ${rps('before').toFixed(0).padStart(12)} ${rps('after').toFixed(0).padStart(12)} ${(rps('after') / rps('before')).toFixed(2).padStart(6)}` +
        ` ${cpu('before').toFixed(0).padStart(13)} us ${cpu('after').toFixed(0).padStart(12)} us ${(cpu('after') / cpu('before')).toFixed(2).padStart(6)} ${String(bad).padStart(8)}`,
    );
  }
} finally {
  await Promise.all([sides.before.stop(), sides.after.stop(), gatewayChild.stop()]);
  await peer.close();
  if (pin) unpinSelf();
}
