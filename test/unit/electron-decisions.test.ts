import { inflateSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import {
  HIDDEN_FLAG,
  autostartEntry,
  loginItemSettings,
  shouldShowWindow,
} from '../../electron/decisions/login-item.js';
import { menuTemplate, type MenuActions } from '../../electron/decisions/menu-template.js';
import {
  NotificationLimiter,
  STUCK_AFTER_ATTEMPTS,
  noticesFor,
  summaryFor,
  type Notice,
} from '../../electron/decisions/notification-policy.js';
import {
  healthOf,
  shellStateFrom,
  type ShellState,
  type StatusFacts,
} from '../../electron/decisions/shell-state.js';
import { trayIconFile, trayModel } from '../../electron/decisions/tray-model.js';
import {
  consolePageUrl,
  consoleWindowUrl,
  externalLinkAction,
  isConsoleNavigation,
  tokenTaken,
  windowNavigation,
  windowOptions,
} from '../../electron/decisions/window-options.js';
import { renderIcon } from '../../electron/icons/icon-art.js';
import { encodePng } from '../../electron/icons/png.js';

// The desktop shell's decisions are plain functions: tested here without an Electron binary.
const online: ShellState = {
  tunnel: { status: 'online', url: 'https://quiet-fox.loca.lt', since: '2026-11-25T10:00:00Z' },
  gateway: { status: 'configured', live: true },
  registry: { status: 'unregistered' },
  agentUrl: 'https://quiet-fox.loca.lt',
  access: { pending: 0 },
  startAtLogin: false,
};
const state = (change: Partial<ShellState>): ShellState => ({ ...online, ...change });
const withAgent = (
  agent: NonNullable<ShellState['gateway']['agent']>,
  gateway: Partial<ShellState['gateway']> = {},
) => state({ gateway: { status: 'configured', live: true, ...gateway, agent } });
const exposing = withAgent({ id: 'main', check: 'present', exposes: ['exec', 'read', 'write'] });
const missing = withAgent({ id: 'public', check: 'missing' });

describe('health and the tray icon', () => {
  it.each<[string, ShellState, string, RegExp]>([
    ['online', online, 'online', /Online at https:\/\/quiet-fox\.loca\.lt/],
    [
      'online and measured reachable',
      state({
        tunnel: {
          status: 'online',
          url: 'https://quiet-fox.loca.lt',
          since: '2026-01-01T00:00:00Z',
          reachability: { state: 'reachable', checkedAt: '2026-01-01T00:00:05Z' },
        },
      }),
      'online',
      /Online at https:\/\/quiet-fox\.loca\.lt: reachable from outside/,
    ],
    [
      // A connected tunnel client is not a reachable agent: the tray says what the check measured.
      'online but a call through it failed',
      state({
        tunnel: {
          status: 'online',
          url: 'https://quiet-fox.loca.lt',
          since: '2026-01-01T00:00:00Z',
          reachability: { state: 'unreachable', problem: 'answered HTTP 408' },
        },
      }),
      'degraded',
      /Not reachable at https:\/\/quiet-fox\.loca\.lt: answered HTTP 408/,
    ],
    ['core failed', state({ coreError: 'Port 8787 is already in use' }), 'error', /Port 8787/],
    [
      'tunnel failed',
      state({ tunnel: { status: 'failed', reason: 'no command set' } }),
      'error',
      /Tunnel failed: no command set/,
    ],
    [
      'gateway not configured',
      state({ gateway: { status: 'missing GATEWAY_TOKEN' } }),
      'degraded',
      /missing GATEWAY_TOKEN/,
    ],
    [
      'gateway problem',
      state({
        gateway: {
          status: 'configured',
          live: true,
          problem: { kind: 'endpoint-disabled', diagnosis: 'Chat endpoint disabled.', fix: 'Enable it.' },
        },
      }),
      'degraded',
      /Chat endpoint disabled/,
    ],
    ['gateway down', state({ gateway: { status: 'configured', live: false } }), 'degraded', /not answering/],
    [
      'tunnel reconnecting',
      state({
        tunnel: {
          status: 'reconnecting',
          attempt: 2,
          nextTryAt: '2026-11-25T10:00:02Z',
          lastError: 'ECONNREFUSED',
        },
      }),
      'degraded',
      /reconnecting: ECONNREFUSED/,
    ],
    ['tunnel connecting', state({ tunnel: { status: 'connecting', attempt: 1 } }), 'degraded', /connecting/],
    ['tunnel off', state({ tunnel: { status: 'off' } }), 'offline', /this machine only/],
  ])('%s', (_name, input, health, reason) => {
    expect(healthOf(input).health).toBe(health);
    const model = trayModel(input);
    expect(model.icon).toBe(health);
    expect(model.tooltip).toMatch(reason);
    expect(model.tooltip.length).toBeLessThanOrEqual(127);
  });

  it('cuts a long tooltip to what Windows shows', () => {
    const model = trayModel(state({ coreError: 'x'.repeat(300) }));
    expect(model.tooltip).toHaveLength(127);
    expect(model.tooltip.endsWith('…')).toBe(true);
  });

  it('names an icon file per state and scale', () => {
    expect(trayIconFile('degraded')).toBe('tray-degraded.png');
    expect(trayIconFile('error', 2)).toBe('tray-error@2x.png');
  });

  it('is degraded while the gateway agent exposes host tools, naming the agent and the tools', () => {
    expect(healthOf(exposing)).toEqual({
      health: 'degraded',
      reason: 'The gateway agent "main" exposes host tools: exec, read, write',
    });
    expect(trayModel(exposing)).toMatchObject({ icon: 'degraded' });
    // An explicit model has no agent id; the tool list may be unknown in detail.
    expect(healthOf(withAgent({ check: 'skipped', exposes: [] })).reason).toBe(
      'The gateway agent exposes host tools',
    );
  });

  it("is degraded while callers' agent is missing on the gateway, and says to add it", () => {
    expect(healthOf(missing)).toEqual({
      health: 'degraded',
      reason: 'Callers\' agent "public" is missing on the gateway: add it',
    });
  });

  it('stays online while the agent is present, restricted, or not yet known', () => {
    for (const check of ['present', 'unknown', 'checking', 'skipped'] as const)
      expect(healthOf(withAgent({ id: 'public', check })).health, check).toBe('online');
  });

  it('orders the reasons: core and tunnel errors, exposed tools, configuration, missing agent, gateway trouble', () => {
    const reason = (input: ShellState) => healthOf(input).reason;
    const problem = { kind: 'unauthorized', diagnosis: 'Token refused.', fix: 'Copy the token.' };
    // Errors first: the app does not work at all.
    expect(reason({ ...exposing, coreError: 'Port 8787 is already in use' })).toMatch(/Port 8787/);
    expect(reason({ ...exposing, tunnel: { status: 'failed', reason: 'no command' } })).toMatch(
      /Tunnel failed/,
    );
    // Then the security risk, before anything about the gateway's configuration or health.
    const allWrong = (agent: NonNullable<ShellState['gateway']['agent']>, status = 'configured') =>
      state({ gateway: { status, live: false, problem, agent } });
    expect(reason(allWrong({ id: 'main', check: 'missing', exposes: ['exec'] }))).toMatch(
      /exposes host tools/,
    );
    expect(
      reason(allWrong({ id: 'main', check: 'present', exposes: ['exec'] }, 'missing GATEWAY_TOKEN')),
    ).toMatch(/exposes host tools/);
    // A gateway without a token cannot have been asked for its agents.
    expect(reason(allWrong({ id: 'public', check: 'missing' }, 'missing GATEWAY_TOKEN'))).toBe(
      'Gateway missing GATEWAY_TOKEN',
    );
    // The missing agent explains a failing call better than the call's own diagnosis.
    expect(reason(allWrong({ id: 'public', check: 'missing' }))).toMatch(/"public" is missing/);
    expect(reason(allWrong({ id: 'public', check: 'present' }))).toBe('Token refused.');
  });
});

describe('shell state from the console status', () => {
  const status = (change: Partial<StatusFacts> = {}): StatusFacts => ({
    tunnel: { status: 'off' },
    gateway: {
      status: 'configured',
      live: true,
      agent: { id: 'main', check: 'present', tools: { verdict: 'restricted', detail: 'deny: exec' } },
    },
    registry: { status: 'unregistered' },
    agent: { url: 'http://127.0.0.1:8787' },
    access: { pending: 0 },
    ...change,
  });

  it('keeps the gateway agent: exposed tools only when its policy exposes them', () => {
    expect(shellStateFrom(status(), false).gateway.agent).toEqual({ id: 'main', check: 'present' });
    const exposes = status({
      gateway: {
        status: 'configured',
        agent: {
          id: 'main',
          check: 'present',
          tools: { verdict: 'exposes-host-tools', tools: ['exec', 'read'], detail: 'profile: full' },
        },
      },
    });
    expect(shellStateFrom(exposes, false).gateway.agent).toEqual({
      id: 'main',
      check: 'present',
      exposes: ['exec', 'read'],
    });
    const unknown = status({
      gateway: {
        status: 'configured',
        agent: { check: 'unknown', tools: { verdict: 'unknown', detail: '' } },
      },
    });
    expect(shellStateFrom(unknown, false).gateway.agent).toEqual({ check: 'unknown' });
  });

  it('keeps a change of address until the core forgets it', () => {
    const addressChange = { previous: 'https://a.loca.lt', url: 'https://b.loca.lt', at: 't', note: 'why' };
    const online = { status: 'online', url: 'https://b.loca.lt', since: 's' } as const;
    expect(shellStateFrom(status({ tunnel: { ...online, addressChange } }), false).addressChange).toEqual(
      addressChange,
    );
    expect(shellStateFrom(status({ tunnel: online }), false)).not.toHaveProperty('addressChange');
  });

  it('keeps the pending count and the newest sender; a core without them means none wait', () => {
    const newest = {
      sender: 'agent://peer.example',
      name: 'Peer',
      code: 'K7Q4M2',
      firstAt: '2026-11-25T10:00:00Z',
    };
    expect(shellStateFrom(status({ access: { pending: 2, newest } }), true)).toMatchObject({
      access: { pending: 2, newest },
      startAtLogin: true,
      agentUrl: 'http://127.0.0.1:8787',
    });
    const older = status({ gateway: { status: 'configured', live: false } });
    delete older.access;
    expect(shellStateFrom(older, false)).toMatchObject({
      access: { pending: 0 },
      gateway: { status: 'configured', live: false },
    });
    expect(shellStateFrom(older, false).gateway).not.toHaveProperty('agent');
  });
});

describe('tray menu', () => {
  const actions = (): MenuActions => ({
    copyPublicUrl: vi.fn(),
    openConsole: vi.fn(),
    openAccess: vi.fn(),
    runSelfTest: vi.fn(),
    startTunnel: vi.fn(),
    stopTunnel: vi.fn(),
    register: vi.fn(),
    rotateKey: vi.fn(),
    setStartAtLogin: vi.fn(),
    checkForUpdates: vi.fn(),
    restartToUpdate: vi.fn(),
    setAutoUpdate: vi.fn(),
    openReleases: vi.fn(),
    quit: vi.fn(),
  });
  const item = (template: ReturnType<typeof menuTemplate>, id: string) =>
    template.find((entry) => entry.id === id)!;
  const click = (entry: ReturnType<typeof item>, checked = false) =>
    (entry.click as unknown as (i: { checked: boolean }) => void)({ checked });

  it('lists status, senders waiting, URL, console, test, tunnel, register, rotate, start at login and quit', () => {
    expect(menuTemplate(online, actions()).map((entry) => entry.id ?? entry.type)).toEqual([
      'status',
      'access',
      'public-url',
      'separator',
      'open-console',
      'self-test',
      'tunnel',
      'register',
      'rotate-key',
      'separator',
      'start-at-login',
      'separator',
      'quit',
    ]);
  });

  it('wires each item to its action', () => {
    const a = actions();
    const template = menuTemplate(online, a);
    click(item(template, 'public-url'));
    expect(a.copyPublicUrl).toHaveBeenCalledWith('https://quiet-fox.loca.lt');
    click(item(template, 'tunnel'));
    expect(a.stopTunnel).toHaveBeenCalled();
    click(item(template, 'start-at-login'), true);
    expect(a.setStartAtLogin).toHaveBeenCalledWith(true);
    for (const [id, fn] of [
      ['open-console', a.openConsole],
      ['self-test', a.runSelfTest],
      ['register', a.register],
      ['rotate-key', a.rotateKey],
      ['quit', a.quit],
    ] as const) {
      click(item(template, id));
      expect(fn, id).toHaveBeenCalled();
    }
  });

  it('shows how many senders wait for approval, and opens the Access page', () => {
    expect(item(menuTemplate(online, actions()), 'access').visible).toBe(false);
    const a = actions();
    const two = menuTemplate(state({ access: { pending: 2 } }), a);
    expect(item(two, 'access')).toMatchObject({ visible: true, label: '2 senders waiting for approval…' });
    click(item(two, 'access'));
    expect(a.openAccess).toHaveBeenCalledTimes(1);
    expect(a.openConsole).not.toHaveBeenCalled();
    expect(item(menuTemplate(state({ access: { pending: 1 } }), a), 'access').label).toBe(
      '1 sender waiting for approval…',
    );
  });

  it('offers to start a stopped tunnel and disables what needs a public URL', () => {
    const template = menuTemplate(state({ tunnel: { status: 'off' } }), actions());
    expect(item(template, 'tunnel').label).toBe('Start tunnel');
    expect(item(template, 'public-url')).toMatchObject({ enabled: false, label: 'No public URL yet' });
    expect(item(template, 'self-test').enabled).toBe(false);
    expect(item(template, 'register').enabled).toBe(false);
    expect(item(template, 'status')).toMatchObject({
      enabled: false,
      label: expect.stringMatching(/^Offline: /),
    });
  });

  it('shows start at login as an unchecked opt-in by default and re-register once registered', () => {
    const template = menuTemplate(
      state({
        registry: {
          status: 'registered',
          record: { registry: 'r', url: 'u', id: 'i', name: 'n', registeredAt: 't' },
        },
      }),
      actions(),
    );
    expect(item(template, 'start-at-login')).toMatchObject({ type: 'checkbox', checked: false });
    expect(item(template, 'register').label).toBe('Register again');
  });
});

describe('notifications', () => {
  const down = state({ gateway: { status: 'configured', live: false } });
  const problem = state({
    gateway: {
      status: 'configured',
      live: true,
      problem: { kind: 'unauthorized', diagnosis: 'Token refused.', fix: 'Copy the token.' },
    },
  });

  it('tells when the gateway goes down (with the fix) and comes back', () => {
    expect(noticesFor(online, problem)).toEqual([
      {
        kind: 'gateway-down',
        title: "Gateway refuses the bridge's token",
        body: 'Token refused. Copy the token.',
      },
    ]);
    expect(noticesFor(down, online).map((n) => n.kind)).toEqual(['gateway-up']);
    expect(noticesFor(online, online)).toEqual([]);
  });

  it('tells when the public URL changes, when the tunnel cannot reconnect, and when registration fails', () => {
    // The core's record of the change drives it (a change at start, from the last run's address, too).
    const change = { previous: 'https://quiet-fox.loca.lt', url: 'https://other.loca.lt', at: 't1' };
    const moved = state({
      tunnel: { status: 'online', url: 'https://other.loca.lt', since: 'x' },
      addressChange: change,
    });
    expect(noticesFor(online, moved)).toEqual([
      {
        kind: 'url-changed',
        title: "Your agent's address changed",
        body: 'Its id is now agent://other.loca.lt (was agent://quiet-fox.loca.lt): agents that approved the old id must approve the new one again.',
        page: 'overview',
      },
    ]);
    const registered = (s: ShellState): ShellState => ({
      ...s,
      registry: {
        status: 'registered',
        record: { registry: 'r', url: 'https://quiet-fox.loca.lt', id: 'i', name: 'n', registeredAt: 't' },
      },
    });
    expect(noticesFor(registered(online), registered(moved))[0]?.body).toMatch(
      /must approve the new one again\. Its registry entry follows by itself\.$/,
    );
    // Told once per change; a dismissed one (gone from the status) is not news.
    expect(noticesFor(moved, moved)).toEqual([]);
    expect(noticesFor(moved, online)).toEqual([]);
    expect(noticesFor(moved, state({ addressChange: { ...change, at: 't2' } })).map((n) => n.kind)).toEqual([
      'url-changed',
    ]);
    const reconnecting = (attempt: number): ShellState =>
      state({ tunnel: { status: 'reconnecting', attempt, nextTryAt: 'x', lastError: 'ECONNREFUSED' } });
    expect(
      noticesFor(reconnecting(STUCK_AFTER_ATTEMPTS - 1), reconnecting(STUCK_AFTER_ATTEMPTS)).map(
        (n) => n.kind,
      ),
    ).toEqual(['tunnel-stuck']);
    expect(noticesFor(reconnecting(STUCK_AFTER_ATTEMPTS), reconnecting(STUCK_AFTER_ATTEMPTS + 1))).toEqual(
      [],
    );
    const failed = state({
      registry: { status: 'unregistered', lastError: { message: 'HTTP 500.', fix: 'Try later.', at: 't1' } },
    });
    expect(noticesFor(online, failed)).toEqual([
      { kind: 'registration-failed', title: 'Registration failed', body: 'HTTP 500. Try later.' },
    ]);
    expect(noticesFor(failed, failed)).toEqual([]);
  });

  const sender = (n: number, name?: string) => ({
    sender: `agent://peer-${n}.example`,
    code: `CODE${n}`,
    firstAt: new Date(Date.UTC(2026, 10, 25, 10, n)).toISOString(),
    ...(name !== undefined ? { name } : {}),
  });
  const waiting = (pending: number, newest?: ReturnType<typeof sender>) =>
    state({ access: { pending, ...(newest ? { newest } : {}) } });

  it('tells when a new sender asks: its id, its self-declared name, its code, and where to approve it', () => {
    expect(noticesFor(online, waiting(1, sender(1, 'Peer One')))).toEqual([
      {
        kind: 'new-sender',
        title: 'New sender asks to talk to your agent',
        body:
          'agent://peer-1.example (calls itself "Peer One"), code CODE1. ' +
          'It waits for your approval in the Access page.',
        page: 'access',
      },
    ]);
    const second = noticesFor(waiting(1, sender(1)), waiting(2, sender(2)));
    expect(second).toHaveLength(1);
    expect(second[0]!.body).toBe(
      'agent://peer-2.example, code CODE2. It waits for your approval in the Access page. 1 other waits too.',
    );
    expect(noticesFor(waiting(2, sender(2)), waiting(2, sender(2)))).toEqual([]);
  });

  it('tells about a sender that arrives as another is decided, and not about a decision alone', () => {
    // The newest approved: the newest is now an older one, and fewer wait.
    expect(noticesFor(waiting(2, sender(2)), waiting(1, sender(1)))).toEqual([]);
    expect(noticesFor(waiting(1, sender(1)), waiting(0))).toEqual([]);
    // One approved and a newer one arrived between two refreshes: the count alone would miss it.
    expect(noticesFor(waiting(2, sender(2)), waiting(2, sender(3))).map((n) => n.kind)).toEqual([
      'new-sender',
    ]);
    // The same sender asking again after its request expired.
    const again = { ...sender(1), firstAt: '2026-11-26T10:00:00.000Z' };
    expect(noticesFor(waiting(1, sender(1)), waiting(1, again)).map((n) => n.kind)).toEqual(['new-sender']);
  });

  it("shows a sender's name as plain, short text: it is the caller's own words", () => {
    const name = 'Your <b>bank</b>\n\u202eSupport & "Security" Team of the Very Long Name Inc.';
    const [notice] = noticesFor(online, waiting(1, sender(1, name)));
    expect(notice!.body).not.toMatch(/[<>\n\u202e&]/);
    expect(notice!.body).toMatch(
      /^agent:\/\/peer-1\.example \(calls itself "Your b bank \/b Support Security Team of…"\)/,
    );
  });

  it('holds new senders beyond the cooldown and sums them up when it is over, if they still wait', () => {
    const limiter = new NotificationLimiter({ perKindMs: 300_000, burst: 3, windowMs: 60_000 });
    const arrive = (n: number, at: number) =>
      limiter.admit(noticesFor(waiting(n - 1, n > 1 ? sender(n - 1) : undefined), waiting(n, sender(n))), at);
    expect(arrive(1, 0)).toHaveLength(1);
    expect(limiter.nextReleaseAt()).toBeUndefined();
    expect(arrive(2, 10_000)).toEqual([]);
    expect(arrive(3, 20_000)).toEqual([]);
    expect(limiter.nextReleaseAt()).toBe(300_000);
    const now = waiting(3, sender(3, 'Peer Three'));
    expect(limiter.release(299_000, (kind) => summaryFor(kind, now))).toEqual([]);
    expect(limiter.release(300_000, (kind) => summaryFor(kind, now))).toEqual([
      {
        kind: 'new-sender',
        title: '3 senders wait for your approval',
        body:
          'The newest: agent://peer-3.example (calls itself "Peer Three"), code CODE3. ' +
          'Approve or deny them in the Access page.',
        page: 'access',
      },
    ]);
    expect(limiter.nextReleaseAt()).toBeUndefined();
  });

  it('drops a held summary when the operator has decided meanwhile, and waits for room in the window', () => {
    const limiter = new NotificationLimiter({ perKindMs: 1000, burst: 1, windowMs: 10_000 });
    const notice = noticesFor(online, waiting(1, sender(1)));
    limiter.admit(notice, 0);
    limiter.admit(notice, 500);
    // Its cooldown is over at 1000, but the one notice the window allows was shown at 0.
    expect(limiter.nextReleaseAt()).toBe(10_000);
    expect(limiter.release(10_000, (kind) => summaryFor(kind, waiting(0)))).toEqual([]);
    expect(limiter.nextReleaseAt()).toBeUndefined();
    expect(summaryFor('new-sender', waiting(1, sender(4)))).toMatchObject({
      title: 'A sender waits for your approval',
      body: 'agent://peer-4.example, code CODE4. Approve or deny it in the Access page.',
    });
    expect(summaryFor('gateway-down', waiting(1, sender(4)))).toBeUndefined();
  });

  it('rate-limits a flapping gateway: one down, one up, then quiet for the cooldown', () => {
    const limiter = new NotificationLimiter({ perKindMs: 60_000, burst: 10, windowMs: 60_000 });
    const downNotice: Notice = { kind: 'gateway-down', title: '', body: '' };
    const upNotice: Notice = { kind: 'gateway-up', title: '', body: '' };
    const shown: string[] = [];
    for (let second = 0; second < 50; second += 5) {
      shown.push(...limiter.admit([downNotice], second * 1000).map((n) => `${second}:${n.kind}`));
      shown.push(...limiter.admit([upNotice], (second + 2) * 1000).map((n) => `${second + 2}:${n.kind}`));
    }
    expect(shown).toEqual(['0:gateway-down', '2:gateway-up']);
    expect(limiter.admit([downNotice], 61_000)).toHaveLength(1);
  });

  it('never says "back" without having said "down", and caps bursts of any kind', () => {
    const limiter = new NotificationLimiter({ perKindMs: 0, burst: 2, windowMs: 10_000 });
    expect(limiter.admit([{ kind: 'gateway-up', title: '', body: '' }], 0)).toEqual([]);
    const kinds: Notice['kind'][] = ['url-changed', 'tunnel-stuck', 'registration-failed'];
    expect(
      limiter.admit(
        kinds.map((kind) => ({ kind, title: '', body: '' })),
        1000,
      ),
    ).toHaveLength(2);
    expect(limiter.admit([{ kind: 'url-changed', title: '', body: '' }], 11_500)).toHaveLength(1);
  });
});

describe('window', () => {
  it('isolates and sandboxes the console window, with no Node in it', () => {
    const options = windowOptions('/icons/window.png');
    expect(options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    });
    expect(options.webPreferences?.preload).toBeUndefined();
    expect(options.show).toBe(false);
  });

  it('navigates only on the console origin; external links only https, through the browser', () => {
    const origin = 'http://127.0.0.1:8788';
    expect(isConsoleNavigation('http://127.0.0.1:8788/#/traffic', origin)).toBe(true);
    expect(isConsoleNavigation('http://127.0.0.1:9999/', origin)).toBe(false);
    expect(isConsoleNavigation('https://evil.example/', origin)).toBe(false);
    expect(isConsoleNavigation('not a url', origin)).toBe(false);
    expect(externalLinkAction('https://github.com/')).toBe('open-in-browser');
    for (const url of [
      'http://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://host/share',
    ]) {
      expect(externalLinkAction(url), url).toBe('deny');
    }
  });

  it('hands the token to the window in the URL fragment', () => {
    expect(consoleWindowUrl('http://127.0.0.1:8788/', 'a+b/c')).toBe(
      'http://127.0.0.1:8788/#token=a%2Bb%2Fc',
    );
  });

  it('opens a page in the fragment, once the renderer has taken the token', () => {
    const consoleUrl = 'http://127.0.0.1:8788';
    const go = (currentUrl: string | undefined, page?: 'access') =>
      windowNavigation({ consoleUrl, token: 'tok', currentUrl, page });
    expect(consolePageUrl(`${consoleUrl}/`, 'access')).toBe('http://127.0.0.1:8788/#/access');
    // A new window: the token first; the page waits until the renderer erased the token from the URL.
    expect(go(undefined)).toEqual({ load: 'http://127.0.0.1:8788/#token=tok' });
    expect(go(undefined, 'access')).toEqual({ load: 'http://127.0.0.1:8788/#token=tok', pending: 'access' });
    expect(go('http://127.0.0.1:8788/#token=tok', 'access')).toEqual({ pending: 'access' });
    // A loaded console: the same document, so its token stays in sessionStorage.
    expect(go('http://127.0.0.1:8788/', 'access')).toEqual({ load: 'http://127.0.0.1:8788/#/access' });
    expect(go('http://127.0.0.1:8788/#/traffic', 'access')).toEqual({
      load: 'http://127.0.0.1:8788/#/access',
    });
    expect(go('http://127.0.0.1:8788/#/traffic')).toEqual({});
    // Anything else in the window (an error page): the token URL again.
    expect(go('chrome-error://chromewebdata/', 'access')).toEqual({
      load: 'http://127.0.0.1:8788/#token=tok',
      pending: 'access',
    });
    expect(tokenTaken('http://127.0.0.1:8788/#/access', consoleUrl)).toBe(true);
    expect(tokenTaken('http://127.0.0.1:8788/#token=tok', consoleUrl)).toBe(false);
    expect(tokenTaken('http://127.0.0.1:9999/', consoleUrl)).toBe(false);
  });
});

describe('start at login', () => {
  it('is opt-in and starts hidden', () => {
    expect(loginItemSettings(false)).toEqual({ openAtLogin: false, openAsHidden: false, args: [] });
    expect(loginItemSettings(true)).toEqual({ openAtLogin: true, openAsHidden: true, args: [HIDDEN_FLAG] });
  });

  it('shows the window on a normal launch and the first run, not when started at login', () => {
    expect(shouldShowWindow(['electron', '.'], false, false)).toBe(true);
    expect(shouldShowWindow(['electron', '.', HIDDEN_FLAG], false, false)).toBe(false);
    expect(shouldShowWindow(['electron', '.'], true, false)).toBe(false);
    expect(shouldShowWindow(['electron', '.', HIDDEN_FLAG], true, true)).toBe(true);
  });
});

describe('icons from the one source', () => {
  it('draws a distinct status dot per state and encodes a valid PNG', () => {
    const pixel = (rgba: Uint8Array, size: number, x: number, y: number) =>
      Array.from(rgba.slice((y * size + x) * 4, (y * size + x) * 4 + 4));
    const dots = (['online', 'degraded', 'offline', 'error'] as const).map((h) =>
      pixel(renderIcon(32, h), 32, 25, 7).join(','),
    );
    expect(new Set(dots).size).toBe(4);
    const png = encodePng(16, 16, renderIcon(16, 'online'));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.readUInt32BE(16)).toBe(16);
    const idat = png.indexOf(Buffer.from('IDAT'));
    const length = png.readUInt32BE(idat - 4);
    expect(inflateSync(png.subarray(idat + 4, idat + 4 + length))).toHaveLength((16 * 4 + 1) * 16);
  });
});

describe('start at login on Linux (XDG autostart)', () => {
  it('runs the app hidden, quoting the path as the Desktop Entry Specification says', () => {
    const entry = autostartEntry(['/opt/Agent Bridge/agent-bridge', HIDDEN_FLAG]);
    expect(entry).toBe(
      [
        '[Desktop Entry]',
        'Type=Application',
        'Name=Agent Bridge',
        'Comment=Puts your own AI agent on the open agent network',
        'Exec="/opt/Agent Bridge/agent-bridge" --hidden',
        'Terminal=false',
        'X-GNOME-Autostart-enabled=true',
        '',
      ].join('\n'),
    );
    expect(autostartEntry(['/home/a/Apps/agent-bridge.AppImage', '--hidden'])).toContain(
      'Exec=/home/a/Apps/agent-bridge.AppImage --hidden\n',
    );
    expect(autostartEntry(['/home/a/my "$apps"/100%/x'])).toContain(
      'Exec="/home/a/my \\"\\$apps\\"/100%%/x"\n',
    );
  });
});
