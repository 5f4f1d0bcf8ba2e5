// Issue 26: offline, the tunnel retried every 30 s for ever and printed `localtunnel.me is unreachable
// (ENOTFOUND)` 33 times in 10 minutes with no hint. Now the reason is said once with what to do, the tries
// come less and less often, and the console's Tunnel card has the same hint. The real CLI in a child process,
// its tunnel host a name that does not resolve (`.invalid` never does: RFC 6761); and a host that refuses.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusResponse, TunnelStatus } from '../../src/protocol/console-api.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const HOST = 'http://agent-bridge-offline-test.invalid';

let gateway: GatewayDouble;
let child: ChildAgent;
const dataDir = tempDir('agent-bridge-tunnel-offline-');

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'gw-token-offline' });
  child = await startChildAgent([
    ...['--port', String(await freePort()), '--console-port', '0', '--data-dir', dataDir],
    ...['--tunnel', 'localtunnel', '--tunnel-host', HOST],
    ...['--gateway-url', gateway.url, '--gateway-token', 'gw-token-offline'],
  ]);
}, 30_000);

afterAll(async () => {
  if (child?.process.exitCode === null) child.process.kill('SIGKILL');
  await gateway?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function tunnelStatus(): Promise<StatusResponse['tunnel']> {
  const { url, token } = JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as Record<
    string,
    string
  >;
  const response = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as StatusResponse).tunnel;
}

type Reconnecting = Extract<TunnelStatus, { status: 'reconnecting' }>;

describe('serve with a tunnel host this machine cannot reach', () => {
  it('says why once, with what to do, however often it tries again', async () => {
    let tunnel: StatusResponse['tunnel'] | undefined;
    // Three failed tries: 1 s, then 2 s, then 4 s apart at most.
    await until(
      async () => {
        tunnel = await tunnelStatus();
        return tunnel.status === 'reconnecting' && tunnel.attempt >= 4;
      },
      20_000,
      'three failed tries',
      200,
    );
    const lines = child.output().split('\n');
    const reason =
      /^Tunnel: tunnel server http:\/\/agent-bridge-offline-test\.invalid is unreachable \((ENOTFOUND|EAI_AGAIN)\)/;
    expect(lines.filter((line) => reason.test(line))).toHaveLength(1);
    const fix = lines.filter((line) => line.startsWith('  Fix: This machine cannot reach'));
    expect(fix).toHaveLength(1);
    expect(fix[0]).toContain('`--tunnel none`, with `--public-url <its address>`');
    expect(fix[0]).toContain('Tailscale Funnel, Cloudflare named tunnel, ngrok with a reserved domain');
    // The first try is announced; the retries of a failure already said are not.
    expect(lines.filter((line) => line.startsWith('Tunnel: connecting'))).toEqual([
      'Tunnel: connecting (attempt 1)...',
    ]);
    // The console's Tunnel card shows the same reason and hint.
    const { lastError, hint } = tunnel as Reconnecting;
    expect(lastError).toMatch(/is unreachable \((ENOTFOUND|EAI_AGAIN)\)$/);
    expect(hint).toBe(fix[0]!.slice('  Fix: '.length));
    // The agent answers locally all along, and its id is not the loopback one a tunnel would replace.
    expect((await fetch(`${child.url}/agent/health`)).status).toBe(200);
    expect(child.output()).toContain('  Agent id:   waiting for the tunnel');
  }, 30_000);
});

describe('a tunnel host that refuses connections', () => {
  let agent: TestAgent;
  afterAll(() => agent?.close());

  it('says it refuses and what to do, at the usual pace: a server that restarts comes back soon', async () => {
    const states: TunnelStatus[] = [];
    agent = await startAgent({
      settings: { tunnel: 'localtunnel', tunnelHost: `http://127.0.0.1:${await freePort()}` },
      tunnel: { backoff: { initialMs: 20, maxMs: 40, offlineMaxMs: 10_000 }, random: () => 1 },
    });
    agent.app.on('tunnel', (state) => states.push(state));
    await until(() => states.filter((s) => s.status === 'reconnecting').length >= 6, 5000, 'six tries');
    const tries = states.filter((s): s is Reconnecting => s.status === 'reconnecting');
    expect(tries[0]!.lastError).toMatch(/is unreachable \(ECONNREFUSED\)$/);
    expect(tries[0]!.hint).toMatch(
      /refuses connections: it may be down, or `--tunnel-host` names the wrong server/,
    );
    // Not the offline pace (20, 40, 80, 160, 320, 640 ms): the wait stays at maxMs (40 ms, plus the try).
    expect(Date.parse(tries[5]!.nextTryAt) - Date.parse(tries[4]!.nextTryAt)).toBeLessThan(300);
  });
});
