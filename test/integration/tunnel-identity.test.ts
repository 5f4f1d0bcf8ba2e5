// Issue 16, item 5: an identity that survives a restart. With the real localtunnel client against the
// loopback tunnel server, an agent stopped and started again on its data dir asks for the name it had and
// keeps its id; when the server hands out another name anyway, the change is announced with its reason,
// kept for the console (and a later restart) until dismissed, and the registry entry follows.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startConsole } from '../../src/console/console-server.js';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { TUNNEL_FILE } from '../../src/tunnel/address-memory.js';
import type { AddressChange } from '../../src/tunnel/supervisor.js';
import { startRegistryDouble, type RegistryDouble } from '../fixtures/registry-double.js';
import { startTunnelServer, type TunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';
import type { Settings } from '../../src/settings/schema.js';

/** How long the loopback server holds a name after its client left (localtunnel-server holds it 1 s). */
const GRACE_MS = 100;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tunnelServer(): Promise<{ server: TunnelServer; control: CountingProxy }> {
  const server = await startTunnelServer({ graceMs: GRACE_MS });
  // The control requests (GET /?new, GET /<name>) pass through a counter, to see which name was asked for.
  const control = await startCountingProxy(server.url);
  cleanups.push(
    () => server.close(),
    () => control.close(),
  );
  return { server, control };
}

interface Run {
  agent: TestAgent;
  addresses: AddressChange[];
}

/** An agent tunnelled through `control` on `dataDir` (kept between runs), online. */
async function run(control: CountingProxy, dataDir: string, settings: Partial<Settings> = {}): Promise<Run> {
  const agent = await startAgent({
    dataDir,
    settings: { tunnel: 'localtunnel', tunnelHost: control.url, ...settings },
    tunnel: { backoff: { initialMs: 100, maxMs: 400 }, stepTimeoutMs: 2000, checkIntervalMs: 60_000 },
  });
  cleanups.push(() => agent.stop());
  const addresses: AddressChange[] = [];
  agent.app.on('address', (change) => addresses.push(change));
  await until(() => agent.app.tunnelState.status === 'online', 5000, 'the tunnel online');
  return { agent, addresses };
}

/** Stops the agent and waits until the server let its name go. */
async function stop(first: Run, server: TunnelServer): Promise<void> {
  const name = new URL(first.agent.app.agentUrl).hostname.split('.')[0]!;
  await first.agent.stop();
  await until(() => !server.clients().includes(name), 2000, 'the tunnel sockets closed');
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
}

const nameOf = (url: string) => new URL(url).hostname.split('.')[0];

/** A data dir the agent keeps between its runs. */
function dataDirs(): string {
  const dir = tempDir();
  cleanups.unshift(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('the tunnel name across restarts', () => {
  it('is kept in the data dir and asked for again at the next start: the same id', async () => {
    const { server, control } = await tunnelServer();
    const dataDir = dataDirs();
    const first = await run(control, dataDir);
    const url = first.agent.app.agentUrl;
    const id = first.agent.app.card().id;
    // A fresh agent asks for a new name (again, if a busy machine made an attempt time out), and no other.
    const firstPaths = control.requests.map((r) => r.path);
    expect(firstPaths.length).toBeGreaterThan(0);
    expect(new Set(firstPaths)).toEqual(new Set(['/?new']));
    control.requests.length = 0;
    expect(JSON.parse(readFileSync(join(dataDir, TUNNEL_FILE), 'utf8'))).toEqual({ url });
    await stop(first, server);

    const second = await run(control, dataDir);
    // The name, and only the name, is asked for again (twice if the server still held it a moment).
    const again = control.requests.map((r) => r.path);
    expect(again.length).toBeGreaterThanOrEqual(1);
    expect(new Set(again)).toEqual(new Set([`/${nameOf(url)}`]));
    expect(second.agent.app.agentUrl).toBe(url);
    expect(second.agent.app.card().id).toBe(id);
    // Announced (the terminal prints the public URL), but not as a change.
    expect(second.addresses).toEqual([{ url, previous: undefined }]);
    expect(second.agent.app.publicAddress.memory.lastChange).toBeUndefined();
  });

  it('gives way to the subdomain setting', async () => {
    const { server, control } = await tunnelServer();
    const dataDir = dataDirs();
    const first = await run(control, dataDir);
    await stop(first, server);
    const second = await run(control, dataDir, { subdomain: 'chosen' });
    expect(control.requests.at(-1)?.path).toBe('/chosen');
    expect(second.agent.app.agentUrl).toBe(server.publicUrlFor('chosen'));
  });

  it('when the server hands out another name anyway: said with its reason, kept until dismissed, registry follows', async () => {
    const { server, control } = await tunnelServer();
    const registry: RegistryDouble = await startRegistryDouble();
    cleanups.push(() => registry.close());
    const dataDir = dataDirs();
    const first = await run(control, dataDir, { registryUrl: registry.url });
    const before = first.agent.app.agentUrl;
    await first.agent.app.register();
    await stop(first, server);

    server.handOutDifferentIds(true);
    // The name is asked for again for 1 s (not the default minute) before another is taken.
    const second = await run(control, dataDir, { registryUrl: registry.url, tunnelNameHoldSeconds: 1 });
    const after = second.agent.app.agentUrl;
    expect(after).not.toBe(before);
    const note = `asked for "${nameOf(before)}" again (this agent's address before) but the server handed out ${after} (taken by someone else meanwhile, or the server forgot it)`;
    expect(second.addresses).toEqual([{ url: after, previous: before, note }]);
    const change = { previous: before, url: after, at: expect.any(String) as unknown, note };
    expect(second.agent.app.publicAddress.memory.lastChange).toEqual(change);
    // The registry entry follows by itself, as within a run.
    // The registry double records the request before the registrar has read its answer: wait for both.
    await until(() => registry.records.has(after), 5000, 'the new address registered');
    await until(() => second.agent.app.registrar.record?.url === after, 5000, 'the registrar to keep it');

    // The console shows it, also after a further restart, until the operator dismisses it.
    await stop(second, server);
    server.handOutDifferentIds(false);
    const third = await run(control, dataDir, { registryUrl: registry.url });
    expect(third.agent.app.agentUrl).toBe(after);
    expect(third.addresses).toEqual([{ url: after, previous: undefined }]);
    const con = await startConsole({
      app: third.agent.app,
      store: openSettingsStore(dataDir),
      dataDir,
      port: 0,
    });
    cleanups.push(() => con.close());
    const status = async () =>
      (await (
        await fetch(`${con.url}/api/status`, { headers: { authorization: `Bearer ${con.token}` } })
      ).json()) as StatusResponse;
    expect((await status()).tunnel.addressChange).toEqual(change);
    const dismissed = await fetch(`${con.url}/api/tunnel/address-change/dismiss`, {
      method: 'POST',
      headers: { authorization: `Bearer ${con.token}` },
    });
    expect(dismissed.status).toBe(200);
    expect((await status()).tunnel.addressChange).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dataDir, TUNNEL_FILE), 'utf8'))).toEqual({ url: after });
  });

  it('an unreadable memory is no memory: a new name, no crash', async () => {
    const { control } = await tunnelServer();
    const dataDir = dataDirs();
    writeFileSync(join(dataDir, TUNNEL_FILE), '{ not json');
    const first = await run(control, dataDir);
    // A new name only (asked again if a busy machine made an attempt time out).
    expect(new Set(control.requests.map((r) => r.path))).toEqual(new Set(['/?new']));
    expect(existsSync(join(dataDir, TUNNEL_FILE))).toBe(true);
    expect(JSON.parse(readFileSync(join(dataDir, TUNNEL_FILE), 'utf8'))).toEqual({
      url: first.agent.app.agentUrl,
    });
  });
});

describe('the terminal', () => {
  /** The real CLI (`serve`) on `dataDir`, tunnelled through `tunnelHost`, until its tunnel is online. */
  async function serve(dataDir: string, tunnelHost: string): Promise<ChildAgent> {
    const child = await startChildAgent([
      ...['--data-dir', dataDir, '--port', String(await freePort()), '--console-port', '0'],
      ...['--tunnel', 'localtunnel', '--tunnel-host', tunnelHost, '--tunnel-name-hold', '1'],
    ]);
    cleanups.push(() => {
      child.process.kill('SIGKILL');
      return child.exited;
    });
    await until(() => /Tunnel: online at /.test(child.output()), 15_000, 'the tunnel online');
    return child;
  }

  async function end(child: ChildAgent, server: TunnelServer): Promise<void> {
    child.process.kill('SIGTERM');
    await child.exited;
    await until(() => server.clients().length === 0, 3000, 'the tunnel sockets closed');
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 3));
  }

  it('says the id changed at start, what that breaks, what follows, and how to keep one address', async () => {
    const { server, control } = await tunnelServer();
    const dataDir = dataDirs();
    const first = await serve(dataDir, control.url);
    const before = /Public URL: (\S+)/.exec(first.output())?.[1];
    expect(before).toMatch(/^http:\/\/[a-z0-9]+\.localhost:\d+$/);
    expect(first.output()).not.toContain('WARNING: this agent');
    await end(first, server);

    server.handOutDifferentIds(true);
    const second = await serve(dataDir, control.url);
    await until(() => second.output().includes('To keep one address'), 5000, 'the warning');
    const after = /Tunnel: online at (\S+)/.exec(second.output())?.[1] ?? '';
    const [was, now] = [`agent://${new URL(before!).host}`, `agent://${new URL(after).host}`];
    expect(second.output()).toContain(
      [
        `WARNING: this agent's public address changed, and with it its id: ${was} is now ${now} (${after}).`,
        `  Breaks: agents that approved ${was} do not know ${now}: they must approve it again (tell them the new id).`,
        '  Not registered: nothing to update in the registry.',
        `  Why: asked for "${nameOf(before!)}" again (this agent's address before) but the server handed out ${after} (taken by someone else meanwhile, or the server forgot it).`,
        '  To keep one address: a stable tunnel (console Settings > Tunnel: Tailscale Funnel, a Cloudflare named tunnel, or ngrok with a reserved domain).',
      ].join('\n'),
    );
  });
});
