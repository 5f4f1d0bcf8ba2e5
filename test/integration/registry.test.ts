// Registration with the registry double (PROTOCOL.md §8): the reachability check first, each way the
// registry can fail as a clear message with a fix and no retry, the record kept in the data dir and loaded
// again after a restart, and the CLI's --register through the loopback tunnel server.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RegistryError, registerWithRegistry } from '../../src/registry/registry-client.js';
import type { Registration, RegistryState } from '../../src/registry/registration.js';
import type { Settings } from '../../src/settings/schema.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import {
  startRegistryDouble,
  type RegistryBehaviour,
  type RegistryDouble,
} from '../fixtures/registry-double.js';
import { startTunnelServer } from '../fixtures/tunnel-server.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { freePort, startChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

let registry: RegistryDouble;

beforeAll(async () => {
  registry = await startRegistryDouble();
});

afterAll(async () => {
  await registry.close();
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  registry.set('ok');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback agent without a tunnel: its loopback URL is its public URL, so the registry can read it. */
async function agentWith(
  settings: Partial<Settings> = {},
  dataDir?: string,
): Promise<{ agent: TestAgent; states: RegistryState[] }> {
  const agent = await startAgent({ settings: { registryUrl: registry.url, ...settings }, dataDir });
  cleanups.push(() => agent.close());
  const states: RegistryState[] = [];
  agent.app.on('registry', (state) => states.push(state));
  return { agent, states };
}

/** The rejection of `promise`, which must be a RegistryError. */
async function registryError(promise: Promise<unknown>): Promise<RegistryError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RegistryError);
  return error as RegistryError;
}

/** A loopback URL where nothing listens. */
async function deadUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/** Lets any retry that would come show up; registration has none, so nothing happens in this time. */
const quietPeriod = () => new Promise((resolve) => setTimeout(resolve, 300));

const registrationFile = (agent: TestAgent) => join(agent.dataDir, 'registration.json');

describe('register()', () => {
  it('registers the reachable URL and keeps the record in <dataDir>/registration.json', async () => {
    const { agent, states } = await agentWith();
    const record = await agent.app.register();
    const url = agent.app.agentUrl;
    expect(record).toEqual({
      id: agent.app.card().id,
      name: agent.app.card().name,
      registeredAt: expect.any(String),
      registry: registry.url,
      url,
    });
    expect(registry.records.get(url)).toMatchObject({ id: record.id, registeredAt: record.registeredAt });
    expect(JSON.parse(readFileSync(registrationFile(agent), 'utf8'))).toEqual(record);
    expect(states).toEqual([
      { status: 'registering', url },
      { status: 'registered', record },
    ]);
  });

  it('refuses before asking the registry when the public URL does not reach the agent yet', async () => {
    const publicUrl = await deadUrl();
    const { agent, states } = await agentWith({ publicUrl });
    const calls = registry.calls.length;
    const error = await registryError(agent.app.register());
    expect(error.message).toBe(
      `Not registered: ${publicUrl} does not reach this agent (${publicUrl}/.well-known/agent.json did not answer: the connection failed (ECONNREFUSED)), so the registry could not read its card.`,
    );
    // The fix follows what the check measured (nothing answered), not a guess that the tunnel is offline.
    expect(error.fix).toMatch(
      /^Whatever serves the public URL is not passing calls on: .*; then register again\.$/,
    );
    expect(error.fix).not.toMatch(/Wait until the tunnel is online/);
    expect(registry.calls.length).toBe(calls);
    expect(agent.app.registrar.current).toEqual({
      status: 'unregistered',
      lastError: { message: error.message, fix: error.fix, at: expect.any(String), cause: 'unreachable' },
    });
    expect(states.map((s) => s.status)).toEqual(['registering', 'unregistered']);
    expect(existsSync(registrationFile(agent))).toBe(false);
  });

  it('says the registry is unreachable, with a fix, when nothing listens at its URL', async () => {
    const registryUrl = await deadUrl();
    const { agent } = await agentWith({ registryUrl });
    const error = await registryError(agent.app.register());
    expect(error.message).toBe(`The registry at ${registryUrl} is unreachable (ECONNREFUSED).`);
    expect(error.fix).toBe(
      'Check your internet connection and the registry URL setting, then register again.',
    );
    expect(agent.app.registrar.current).toMatchObject({
      status: 'unregistered',
      lastError: { message: error.message, fix: error.fix },
    });
  });

  it.each<[RegistryBehaviour, RegExp | string, RegExp, number]>([
    [
      'error-500',
      'The registry refused the registration (HTTP 500): internal error',
      /registry is having trouble; try again in a few minutes/,
      500,
    ],
    [
      'refuse-400',
      'The registry refused the registration (HTTP 400): Registration closed',
      /Read the registry message above; fix what it names and register again/,
      400,
    ],
    [
      'bad-reply',
      /^The registry at http:\/\/127\.0\.0\.1:\d+ answered, but not with a registration record \(\{id, name, registeredAt\}\)\.$/,
      /registry URL setting: it must point at a SAMVAD registry/,
      200,
    ],
  ])(
    '%s: a clear message with a fix, kept in the state, and no retry',
    async (behaviour, message, fix, status) => {
      const { agent, states } = await agentWith();
      registry.set(behaviour);
      const calls = registry.calls.length;
      const error = await registryError(agent.app.register());
      if (typeof message === 'string') expect(error.message).toBe(message);
      else expect(error.message).toMatch(message);
      expect(error.fix).toMatch(fix);
      expect(error.httpStatus).toBe(status);
      expect(agent.app.registrar.current).toEqual({
        status: 'unregistered',
        lastError: { message: error.message, fix: error.fix, at: expect.any(String) },
      });
      expect(existsSync(registrationFile(agent))).toBe(false);
      await quietPeriod();
      expect(registry.calls.length - calls).toBe(1);
      expect(states.map((s) => s.status)).toEqual(['registering', 'unregistered']);
    },
  );

  it('keeps the earlier record when a later registration fails, with the error beside it', async () => {
    const { agent } = await agentWith();
    const record = await agent.app.register();
    const saved = readFileSync(registrationFile(agent), 'utf8');
    registry.set('error-500');
    const error = await registryError(agent.app.register());
    expect(agent.app.registrar.current).toEqual({
      status: 'registered',
      record,
      lastError: { message: error.message, fix: error.fix, at: expect.any(String) },
    });
    expect(readFileSync(registrationFile(agent), 'utf8')).toBe(saved);
    // A later success clears the error.
    registry.set('ok');
    await agent.app.register();
    expect(agent.app.registrar.current).not.toHaveProperty('lastError');
  });
});

describe('registerWithRegistry()', () => {
  it('gives up on a registry that hangs after its timeout, once', async () => {
    const { agent } = await agentWith();
    registry.set('hang');
    const calls = registry.calls.length;
    const started = Date.now();
    const error = await registryError(registerWithRegistry(registry.url, agent.app.agentUrl, 300));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.message).toBe(`The registry at ${registry.url} did not answer within 0.3 s.`);
    expect(error.fix).toMatch(/registry URL setting, then register again/);
    await quietPeriod();
    expect(registry.calls.length - calls).toBe(1);
  });

  it("passes on the registry's reason when it cannot read the card, with a fix about the tunnel", async () => {
    const url = await deadUrl();
    const error = await registryError(registerWithRegistry(registry.url, url, 5000));
    expect(error.httpStatus).toBe(422);
    expect(error.message).toContain(
      `(HTTP 422): Could not fetch agent card from ${url}/.well-known/agent.json`,
    );
    expect(error.fix).toMatch(/could not read your card at the public URL: check the tunnel is online/);
  });
});

describe('the registration across restarts and address changes', () => {
  it('is loaded again by a restarted agent; the same URL again does nothing', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const first = await startAgent({ settings: { registryUrl: registry.url, port }, dataDir });
    let record: Registration;
    try {
      record = await first.app.register();
    } finally {
      await first.stop();
    }

    const { agent, states } = await agentWith({ port }, dataDir);
    expect(agent.app.agentUrl).toBe(record.url);
    expect(agent.app.registrar.current).toEqual({ status: 'registered', record });
    expect(agent.app.registrar.record).toEqual(record);

    const calls = registry.calls.length;
    await expect(agent.app.registrar.addressChanged(record.url)).resolves.toBeUndefined();
    await quietPeriod();
    expect(registry.calls.length).toBe(calls);
    expect(states).toEqual([]);
    expect(agent.app.registrar.current).toEqual({ status: 'registered', record });
  });

  it('reports a re-registration that fails on an address change, keeps the record, and does not retry', async () => {
    const { agent, states } = await agentWith();
    const record = await agent.app.register();
    const calls = registry.calls.length;
    // An address that does not serve this agent: the reachability check refuses it before the registry.
    const elsewhere = await deadUrl();
    await expect(agent.app.registrar.addressChanged(elsewhere)).resolves.toBeUndefined();
    expect(agent.app.registrar.current).toMatchObject({
      status: 'registered',
      record,
      lastError: { message: expect.stringContaining(`${elsewhere} does not reach this agent (`) },
    });
    await quietPeriod();
    expect(registry.calls.length).toBe(calls);
    expect(states.map((s) => s.status)).toEqual(['registering', 'registered', 'registering', 'registered']);
  });

  it('does nothing on an address change when the agent never registered', async () => {
    const { agent, states } = await agentWith();
    const calls = registry.calls.length;
    await expect(agent.app.registrar.addressChanged('http://other.localhost:1')).resolves.toBeUndefined();
    expect(registry.calls.length).toBe(calls);
    expect(states).toEqual([]);
    expect(agent.app.registrar.current).toEqual({ status: 'unregistered' });
  });
});

describe('CLI --register', () => {
  let gateway: GatewayDouble;
  beforeAll(async () => {
    gateway = await startGatewayDouble({ token: 'gw-token' });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('prints the public URL as soon as known, registers, follows a new URL, and exits 0 on SIGTERM', async () => {
    const tunnel = await startTunnelServer();
    cleanups.push(() => tunnel.close());
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const child = await startChildAgent([
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      '--tunnel',
      'localtunnel',
      '--tunnel-host',
      tunnel.url,
      '--registry-url',
      registry.url,
      '--register',
      '--dev-http-peers',
      '--gateway-url',
      gateway.url,
      '--gateway-token',
      'gw-token',
      // The server below forgets the name for good: the agent holds out for it 1 s, not the default minute.
      '--tunnel-name-hold',
      '1',
    ]);
    cleanups.push(() => child.process.exitCode === null && child.process.kill('SIGKILL'));

    const publicUrl = /Public URL: (http:\/\/[a-z0-9]+\.localhost:\d+)/;
    await until(() => publicUrl.test(child.output()), 10_000, `the public URL in:\n${child.output()}`);
    const url = publicUrl.exec(child.output())![1]!;
    const id = `agent://${new URL(url).host}`;
    await until(
      () => child.output().includes(`Registered with ${registry.url} as ${id} (${url}).`),
      10_000,
      `the registration in:\n${child.output()}`,
    );
    expect(registry.records.get(url)).toMatchObject({ id });
    expect(child.output()).toContain(`Tunnel: online at ${url}`);

    // The tunnel server comes back handing out another id: the new URL is printed and registered.
    tunnel.handOutDifferentIds(true);
    await tunnel.stop();
    await tunnel.start();
    // Said as the change of id it is, with what follows: registered, so the registry entry moves by itself.
    const changed = new RegExp(
      `WARNING: this agent's public address changed, and with it its id: ${id.replace(/\./g, '\\.')} is now agent://\\S+ \\((http://[a-z0-9]+\\.localhost:\\d+)\\)\\.\n.*\n  Follows: the registry entry moves to the new address by itself\\.`,
    );
    await until(() => changed.test(child.output()), 10_000, `the new URL in:\n${child.output()}`);
    const next = changed.exec(child.output())![1]!;
    await until(
      () =>
        child
          .output()
          .includes(`Registered with ${registry.url} as agent://${new URL(next).host} (${next}).`),
      10_000,
      `the re-registration in:\n${child.output()}`,
    );
    expect(registry.records.get(next)).toMatchObject({ id: `agent://${new URL(next).host}` });
    expect(child.output()).not.toMatch(/Registration failed|agent-bridge:|Unhandled|Error:/);

    child.process.kill('SIGTERM');
    expect(await child.exited).toBe('0');
    expect(child.output()).toContain('SIGTERM: finishing in-flight requests and stopping...');
  });
});
