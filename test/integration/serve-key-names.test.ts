// Issue 26, item 7: the serve output named an A2A caller `a2a-key:<id>` only, and a call with a revoked key
// "unknown". The real CLI in a child process, its keys issued (one revoked) in the data dir before it starts:
// each line names the key beside its id, and marks the revoked one, so the operator sees who still uses it.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2AKeys } from '../../src/access/a2a-keys.js';
import { A2AKeyFile } from '../../src/state/a2a-key-store.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

let gateway: GatewayDouble;
let child: ChildAgent;
const dataDir = tempDir('agent-bridge-serve-keys-');
const issued: Record<'current' | 'revoked', { id: string; secret: string }> = {
  current: { id: '', secret: '' },
  revoked: { id: '', secret: '' },
};

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-serve-keys' });
  // As `agent-bridge keys issue` and `revoke` do when no agent runs on the data dir.
  const keys = new A2AKeys({ records: new A2AKeyFile(dataDir) });
  for (const [which, name] of [
    ['current', 'Research bot'],
    ['revoked', 'Old partner'],
  ] as const) {
    const { key, secret } = await keys.issue({ name });
    issued[which] = { id: key.id, secret };
  }
  await keys.revoke(issued.revoked.id);
  await keys.close();
  const port = await freePort();
  child = await startChildAgent([
    '--port',
    String(port),
    '--console-port',
    '0',
    '--data-dir',
    dataDir,
    '--tunnel',
    'none',
    '--gateway-url',
    gateway.url,
    '--gateway-token',
    'gw-token-serve-keys',
  ]);
}, 30_000);

afterAll(async () => {
  if (child?.process.exitCode === null) child.process.kill('SIGKILL');
  await gateway?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function send(secret: string, text: string) {
  return fetch(`${child.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: `Bearer ${secret}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
}

const lineWith = (needle: string) =>
  child
    .output()
    .split('\n')
    .find((line) => line.includes(needle));

describe('the serve output', () => {
  it('names each A2A key beside its id, and marks a revoked one', async () => {
    expect((await send(issued.current.secret, 'hello')).status).toBe(200);
    expect((await send(issued.revoked.secret, 'still here')).status).toBe(401);
    await until(() => lineWith(' 401 ') !== undefined && lineWith(' 200 ') !== undefined, 5000, 'both lines');
    expect(lineWith(' 200 ')).toContain(`a2a-key:${issued.current.id} ("Research bot")`);
    expect(lineWith(' 401 ')).toContain(`a2a-key:${issued.revoked.id} ("Old partner", revoked key)`);
    expect(lineWith(' 401 ')).toContain('refused at access');
  });
});
