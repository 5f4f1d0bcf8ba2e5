import { afterEach, describe, expect, it } from 'vitest';
import {
  TunnelConfigError,
  TunnelUnreachableError,
  type TunnelConnection,
  type TunnelProvider,
} from '../../src/tunnel/provider.js';
import { backoffDelay, type TunnelState } from '../../src/tunnel/state.js';
import { TunnelSupervisor, type AddressChange } from '../../src/tunnel/supervisor.js';

// The supervisor's decisions with a scripted provider: each open() takes the next step of the script.
type Step = { url: string } | { error: Error } | 'hang';

class ScriptedProvider implements TunnelProvider {
  readonly name = 'scripted';
  readonly asksForName = true;
  readonly opened: { subdomain?: string }[] = [];
  readonly connections: { close: () => void; breakWith: (e: Error) => void; closed: boolean }[] = [];
  constructor(private readonly steps: Step[]) {}

  async open(_port: number, options: { subdomain?: string }): Promise<TunnelConnection> {
    this.opened.push({ subdomain: options.subdomain });
    const step = this.steps.shift() ?? 'hang';
    if (step === 'hang') return new Promise<TunnelConnection>(() => undefined);
    if ('error' in step) throw step.error;
    let breakWith: (e: Error) => void = () => undefined;
    const broken = new Promise<Error>((resolve) => (breakWith = resolve));
    const handle = {
      closed: false,
      breakWith: (e: Error) => breakWith(e),
      close: () => (handle.closed = true),
    };
    this.connections.push(handle);
    return { url: step.url, broken, close: handle.close };
  }
}

const supervisors: TunnelSupervisor[] = [];
afterEach(() => {
  for (const s of supervisors.splice(0)) s.stop();
});

function supervise(
  provider: TunnelProvider,
  extra: Partial<ConstructorParameters<typeof TunnelSupervisor>[0]> = {},
) {
  const supervisor = new TunnelSupervisor({
    provider,
    port: 1234,
    backoff: { initialMs: 10, maxMs: 80 },
    random: () => 1,
    recheckDelayMs: 5,
    ...extra,
  });
  supervisors.push(supervisor);
  const states: TunnelState[] = [];
  const addresses: AddressChange[] = [];
  supervisor.on('state', (state) => states.push(state));
  supervisor.on('address', (change) => addresses.push(change));
  return { supervisor, states, addresses };
}

const until = async (condition: () => boolean, timeoutMs = 2000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe('backoff', () => {
  it('doubles from 1 s to 30 s, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, () => 1))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000,
    ]);
    expect(backoffDelay(3, () => 0)).toBe(2000);
  });
});

describe('TunnelSupervisor', () => {
  it('goes connecting -> online and announces the address', async () => {
    const provider = new ScriptedProvider([{ url: 'https://abcd.loca.lt/' }]);
    const { supervisor, states, addresses } = supervise(provider);
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    expect(states.map((s) => s.status)).toEqual(['connecting', 'online']);
    expect(supervisor.url).toBe('https://abcd.loca.lt');
    expect(addresses).toEqual([{ url: 'https://abcd.loca.lt', previous: undefined }]);
  });

  it('retries a failed open with growing backoff and a fresh client, then comes online', async () => {
    const provider = new ScriptedProvider([
      { error: new Error('refused') },
      { error: new Error('refused') },
      { url: 'https://abcd.loca.lt' },
    ]);
    const { supervisor, states } = supervise(provider);
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    const reconnecting = states.filter(
      (s): s is Extract<TunnelState, { status: 'reconnecting' }> => s.status === 'reconnecting',
    );
    expect(reconnecting.map((s) => [s.attempt, s.lastError])).toEqual([
      [2, 'refused'],
      [3, 'refused'],
    ]);
    expect(provider.opened).toHaveLength(3);
  });

  it('reconnects when the tunnel breaks, asking for the same subdomain, and reports a changed address once the old name lapsed', async () => {
    const provider = new ScriptedProvider([{ url: 'https://abcd.loca.lt' }, { url: 'https://wxyz.loca.lt' }]);
    // The name is not kept at all here: the server's answer is taken at once.
    const { supervisor, addresses } = supervise(provider, { nameLapseMs: 0 });
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    provider.connections[0]!.breakWith(new Error('socket closed'));
    await until(() => supervisor.url === 'https://wxyz.loca.lt');
    expect(provider.connections[0]!.closed).toBe(true);
    expect(provider.opened[1]).toEqual({ subdomain: 'abcd' });
    expect(addresses[1]).toEqual({
      url: 'https://wxyz.loca.lt',
      previous: 'https://abcd.loca.lt',
      note: 'asked for "abcd" again (this agent\'s address before) but the server handed out https://wxyz.loca.lt (taken by someone else meanwhile, or the server forgot it)',
    });
  });

  it('backs off further while this machine is offline, up to offlineMaxMs, and says what to do', async () => {
    // Issue 26: offline, every 30 s for ever. Refused (the server is down) keeps the usual pace.
    const unreachable = (offline: boolean) => ({
      error: new TunnelUnreachableError('tunnel server x is unreachable', offline, 'what to do'),
    });
    const waits = async (offline: boolean) => {
      const provider = new ScriptedProvider([...Array.from({ length: 6 }, () => unreachable(offline))]);
      const { supervisor } = supervise(provider, { backoff: { initialMs: 10, maxMs: 20, offlineMaxMs: 80 } });
      const seen: { wait: number; state: TunnelState }[] = [];
      supervisor.on('state', (state) => {
        if (state.status === 'reconnecting')
          seen.push({ wait: Date.parse(state.nextTryAt) - Date.now(), state });
      });
      supervisor.start();
      await until(() => seen.length === 6, 3000);
      supervisor.stop();
      return seen;
    };
    const offline = await waits(true);
    // 10, 20, then on doubling past maxMs up to offlineMaxMs (random () => 1: no jitter); a millisecond of slack.
    offline.forEach(({ wait }, i) => expect(wait).toBeGreaterThanOrEqual([10, 20, 40, 80, 80, 80][i]! - 1));
    offline.forEach(({ wait }, i) => expect(wait).toBeLessThanOrEqual([10, 20, 40, 80, 80, 80][i]!));
    expect(offline[0]!.state).toMatchObject({
      lastError: 'tunnel server x is unreachable',
      hint: 'what to do',
    });
    const refused = await waits(false);
    refused.forEach(({ wait }, i) => expect(wait).toBeLessThanOrEqual([10, 20, 20, 20, 20, 20][i]!));
    expect(refused[0]!.state).toMatchObject({ hint: 'what to do' });
  });

  it('keeps its name: another one handed out while the server still holds it is given back, and the name asked for again', async () => {
    const provider = new ScriptedProvider([
      { url: 'https://abcd.loca.lt' },
      // The server still holds "abcd" for the connection that just broke, and hands out a random name.
      { url: 'https://wxyz.loca.lt' },
      { url: 'https://abcd.loca.lt' },
    ]);
    const { supervisor, states, addresses } = supervise(provider);
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    provider.connections[0]!.breakWith(new Error('socket closed'));
    await until(() => provider.opened.length === 3 && supervisor.state.status === 'online', 5000);
    expect(provider.opened.map((o) => o.subdomain)).toEqual([undefined, 'abcd', 'abcd']);
    // The other name was given back at once, never announced, never the agent's address.
    expect(provider.connections[1]!.closed).toBe(true);
    expect(addresses).toEqual([{ url: 'https://abcd.loca.lt', previous: undefined }]);
    expect(states.some((s) => s.status === 'online' && s.url === 'https://wxyz.loca.lt')).toBe(false);
    const keeping = states.find((s) => s.status === 'reconnecting' && s.keepingName);
    expect(keeping).toMatchObject({
      keepingName: 'abcd',
      lastError: expect.stringMatching(/still holds "abcd"/),
    });
    // Asked again no sooner than the server lets a name go (about a second after the old client left).
    const at = (s: TunnelState) => (s.status === 'reconnecting' ? Date.parse(s.nextTryAt) : 0);
    expect(at(keeping!) - Date.now()).toBeLessThanOrEqual(1500);
    expect(supervisor.url).toBe('https://abcd.loca.lt');
  });

  it('keeps the name of the last run after a restart (memory), and takes another only once the lapse is over', async () => {
    const provider = new ScriptedProvider([{ url: 'https://wxyz.loca.lt' }, { url: 'https://qrst.loca.lt' }]);
    const memory = { url: 'https://abcd.loca.lt', online: () => undefined };
    const { supervisor, addresses } = supervise(provider, { memory, nameLapseMs: 300 });
    const started = Date.now();
    supervisor.start();
    await until(() => supervisor.state.status === 'online', 5000);
    expect(provider.opened.map((o) => o.subdomain)).toEqual(['abcd', 'abcd']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(supervisor.url).toBe('https://qrst.loca.lt');
    expect(addresses).toEqual([
      expect.objectContaining({ url: 'https://qrst.loca.lt', previous: 'https://abcd.loca.lt' }),
    ]);
  });

  it("takes another server's name at once: a new tunnel host never held the old one", async () => {
    const provider = new ScriptedProvider([{ url: 'https://wxyz.other.example' }]);
    const memory = { url: 'https://abcd.loca.lt', online: () => undefined };
    const { supervisor } = supervise(provider, { memory });
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    expect(provider.opened).toHaveLength(1);
  });

  it('shows what the reachability check measured: checking, then reachable, then unreachable with the reason', async () => {
    let answer: string | undefined = undefined;
    const provider = new ScriptedProvider([{ url: 'https://abcd.loca.lt' }, { url: 'https://abcd.loca.lt' }]);
    const { supervisor, states } = supervise(provider, {
      recheckDelayMs: 200,
      checkReachability: async () => {
        if (answer) throw new Error(answer);
      },
    });
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    expect(states.find((s) => s.status === 'online')).toMatchObject({ reachability: { state: 'checking' } });
    await until(
      () => supervisor.state.status === 'online' && supervisor.state.reachability?.state === 'reachable',
    );
    const online = () => supervisor.state as Extract<TunnelState, { status: 'online' }>;
    expect(Date.parse(online().reachability?.checkedAt ?? '')).toBeGreaterThan(0);
    // A check that passes again changes nothing anyone must hear: no new state event.
    const heard = states.length;
    await supervisor.checkNow();
    expect(states.length).toBe(heard);
    answer = 'answered HTTP 408';
    void supervisor.checkNow();
    await until(() => online().reachability?.state === 'unreachable');
    expect(online().reachability).toMatchObject({ state: 'unreachable', problem: 'answered HTTP 408' });
    // Looked at again before the tunnel is reopened, asking for the same name.
    await until(() => provider.opened.length === 2, 3000);
    expect(provider.opened[1]).toEqual({ subdomain: 'abcd' });
  });

  it('asks for the configured subdomain', async () => {
    const provider = new ScriptedProvider([{ url: 'https://mine.loca.lt' }]);
    const { supervisor, addresses } = supervise(provider, { subdomain: 'mine' });
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    expect(provider.opened[0]).toEqual({ subdomain: 'mine' });
    expect(addresses[0]?.note).toBeUndefined();
  });

  it('looks twice before treating a failed reachability check as an outage', async () => {
    let failuresLeft = 1;
    const provider = new ScriptedProvider([{ url: 'https://abcd.loca.lt' }]);
    const { supervisor, states } = supervise(provider, {
      checkReachability: async () => {
        if (failuresLeft-- > 0) throw new Error('one 502');
      },
    });
    supervisor.start();
    await until(() => failuresLeft < 0);
    expect(supervisor.state.status).toBe('online');
    expect(states.some((s) => s.status === 'reconnecting')).toBe(false);
  });

  it('treats a failed reachability check as a failure; backoff keeps growing until a check passes', async () => {
    let reachable = false;
    const provider = new ScriptedProvider(
      Array.from({ length: 10 }, () => ({ url: 'https://abcd.loca.lt' })),
    );
    const { supervisor, states } = supervise(provider, {
      checkReachability: async () => {
        if (!reachable) throw new Error('card not served');
      },
    });
    supervisor.start();
    await until(() => states.filter((s) => s.status === 'reconnecting').length >= 3);
    const attempts = states.flatMap((s) => (s.status === 'reconnecting' ? [s.attempt] : []));
    expect(attempts.slice(0, 3)).toEqual([2, 3, 4]);
    expect(states.find((s) => s.status === 'reconnecting')).toMatchObject({
      lastError: 'public URL is not reachable: card not served',
    });
    reachable = true;
    await until(() => supervisor.state.status === 'online' && provider.opened.length >= 4);
    await supervisor.checkNow();
    expect(supervisor.state.status).toBe('online');
  });

  it('stops for good on a configuration error', async () => {
    const provider = new ScriptedProvider([{ error: new TunnelConfigError('no command set') }]);
    const { supervisor } = supervise(provider);
    supervisor.start();
    await until(() => supervisor.state.status === 'failed');
    expect(supervisor.state).toEqual({ status: 'failed', reason: 'no command set' });
    await new Promise((r) => setTimeout(r, 50));
    expect(provider.opened).toHaveLength(1);
  });

  it('gives up on a provider that never answers, and closes what arrives late', async () => {
    const provider = new ScriptedProvider(['hang', { url: 'https://abcd.loca.lt' }]);
    const { supervisor, states } = supervise(provider, { openTimeoutMs: 30 });
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    expect(states.find((s) => s.status === 'reconnecting')).toMatchObject({
      lastError: expect.stringMatching(/no answer within/),
    });
  });

  it('stop() closes the connection and opens nothing more', async () => {
    const provider = new ScriptedProvider([{ url: 'https://abcd.loca.lt' }, { url: 'https://abcd.loca.lt' }]);
    const { supervisor } = supervise(provider);
    supervisor.start();
    await until(() => supervisor.state.status === 'online');
    supervisor.stop();
    expect(supervisor.state).toEqual({ status: 'off' });
    expect(provider.connections[0]!.closed).toBe(true);
    provider.connections[0]!.breakWith(new Error('late'));
    await new Promise((r) => setTimeout(r, 50));
    expect(provider.opened).toHaveLength(1);
  });
});
