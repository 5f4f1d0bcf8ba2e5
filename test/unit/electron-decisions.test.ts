import { inflateSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { HIDDEN_FLAG, loginItemSettings, shouldShowWindow } from '../../electron/decisions/login-item.js';
import { menuTemplate, type MenuActions } from '../../electron/decisions/menu-template.js';
import {
  NotificationLimiter,
  STUCK_AFTER_ATTEMPTS,
  noticesFor,
  type Notice,
} from '../../electron/decisions/notification-policy.js';
import { healthOf, type ShellState } from '../../electron/decisions/shell-state.js';
import { trayIconFile, trayModel } from '../../electron/decisions/tray-model.js';
import {
  consoleWindowUrl,
  externalLinkAction,
  isConsoleNavigation,
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
  startAtLogin: false,
};
const state = (change: Partial<ShellState>): ShellState => ({ ...online, ...change });

describe('health and the tray icon', () => {
  it.each<[string, ShellState, string, RegExp]>([
    ['online', online, 'online', /Online at https:\/\/quiet-fox\.loca\.lt/],
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
          problem: { diagnosis: 'Chat endpoint disabled.', fix: 'Enable it.' },
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
});

describe('tray menu', () => {
  const actions = (): MenuActions => ({
    copyPublicUrl: vi.fn(),
    openConsole: vi.fn(),
    runSelfTest: vi.fn(),
    startTunnel: vi.fn(),
    stopTunnel: vi.fn(),
    register: vi.fn(),
    rotateKey: vi.fn(),
    setStartAtLogin: vi.fn(),
    quit: vi.fn(),
  });
  const item = (template: ReturnType<typeof menuTemplate>, id: string) =>
    template.find((entry) => entry.id === id)!;
  const click = (entry: ReturnType<typeof item>, checked = false) =>
    (entry.click as unknown as (i: { checked: boolean }) => void)({ checked });

  it('lists status, URL, console, test, tunnel, register, rotate, start at login and quit, in order', () => {
    expect(menuTemplate(online, actions()).map((entry) => entry.id ?? entry.type)).toEqual([
      'status',
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
      problem: { diagnosis: 'Token refused.', fix: 'Copy the token.' },
    },
  });

  it('tells when the gateway goes down (with the fix) and comes back', () => {
    expect(noticesFor(online, problem)).toEqual([
      { kind: 'gateway-down', title: 'Gateway down', body: 'Token refused. Copy the token.' },
    ]);
    expect(noticesFor(down, online).map((n) => n.kind)).toEqual(['gateway-up']);
    expect(noticesFor(online, online)).toEqual([]);
  });

  it('tells when the public URL changes, when the tunnel cannot reconnect, and when registration fails', () => {
    const moved = state({ tunnel: { status: 'online', url: 'https://other.loca.lt', since: 'x' } });
    expect(noticesFor(online, moved)).toEqual([
      {
        kind: 'url-changed',
        title: 'Public URL changed',
        body: 'The agent is now at https://other.loca.lt.',
      },
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
