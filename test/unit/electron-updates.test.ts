import { describe, expect, it, vi } from 'vitest';
import { menuTemplate, type MenuActions } from '../../electron/decisions/menu-template.js';
import { noticesFor } from '../../electron/decisions/notification-policy.js';
import type { ShellState } from '../../electron/decisions/shell-state.js';
import {
  CHECK_EVERY_MS,
  RETRY_FIRST_MS,
  nextCheckAt,
  nextUpdateState,
  updateMenuItems,
  updateMode,
  updateNotice,
  type UpdateState,
  type UpdateView,
} from '../../electron/decisions/updates.js';

// The desktop app's update decisions, as plain functions: when to check, what the tray shows, what an
// update that fails becomes, and what the operator is told.
const HOUR = 60 * 60_000;
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);
const view = (state: UpdateState, change: Partial<UpdateView> = {}): UpdateView => ({
  mode: 'automatic',
  state,
  current: '0.1.0',
  ...change,
});
const actions = () => ({
  checkForUpdates: vi.fn(),
  restartToUpdate: vi.fn(),
  setAutoUpdate: vi.fn(),
  openReleases: vi.fn(),
});
const click = (item: { click?: unknown } | undefined, checked = false) =>
  (item?.click as (i: { checked: boolean }) => void)({ checked });

describe('which builds update themselves', () => {
  it('only signed, installed builds; the operator may turn the automatic checks off', () => {
    expect(updateMode({ packaged: true, signed: true, autoUpdate: true })).toBe('automatic');
    expect(updateMode({ packaged: true, signed: true, autoUpdate: false })).toBe('manual');
    // An update to an unsigned build could not be verified: whatever the setting says.
    expect(updateMode({ packaged: true, signed: false, autoUpdate: true })).toBe('unsigned');
    expect(updateMode({ packaged: false, signed: true, autoUpdate: true })).toBe('source');
  });
});

describe('when the app checks', () => {
  it('checks at start, then every few hours', () => {
    expect(nextCheckAt({ phase: 'idle' }, 'automatic', T0)).toBe(T0);
    expect(nextCheckAt({ phase: 'idle', lastCheckAt: T0 + HOUR }, 'automatic', T0)).toBe(
      T0 + HOUR + CHECK_EVERY_MS,
    );
    expect(CHECK_EVERY_MS).toBe(4 * HOUR);
  });

  it('never checks by itself when updates are manual, unsigned or from source', () => {
    for (const mode of ['manual', 'unsigned', 'source'] as const)
      expect(nextCheckAt({ phase: 'idle' }, mode, T0), mode).toBeUndefined();
  });

  it('does not check while a check or a download runs, or once an update waits for its restart', () => {
    expect(nextCheckAt({ phase: 'checking', manual: false, failures: 0 }, 'automatic', T0)).toBeUndefined();
    expect(
      nextCheckAt({ phase: 'downloading', version: '0.2.0', percent: 5, failures: 0 }, 'automatic', T0),
    ).toBeUndefined();
    expect(nextCheckAt({ phase: 'ready', version: '0.2.0' }, 'automatic', T0)).toBeUndefined();
  });

  it('retries a failure after 15 minutes, doubling the wait up to the usual interval', () => {
    const failed = (failures: number): UpdateState => ({
      phase: 'failed',
      message: 'net::ERR_INTERNET_DISCONNECTED',
      at: T0,
      failures,
      manual: false,
    });
    expect([1, 2, 3, 4, 5, 9].map((n) => (nextCheckAt(failed(n), 'automatic', T0)! - T0) / 60_000)).toEqual([
      15, 30, 60, 120, 240, 240,
    ]);
    expect(RETRY_FIRST_MS).toBe(15 * 60_000);
  });
});

describe('what an update goes through', () => {
  const run = (events: Parameters<typeof nextUpdateState>[1][], manual = false) =>
    events.reduce<UpdateState>((state, event) => nextUpdateState(state, event, T0, manual), {
      phase: 'idle',
    });

  it('checks, downloads in the background and waits for the restart', () => {
    const downloading = run([{ kind: 'checking' }, { kind: 'available', version: '0.2.0' }]);
    expect(downloading).toEqual({ phase: 'downloading', version: '0.2.0', percent: 0, failures: 0 });
    expect(nextUpdateState(downloading, { kind: 'progress', percent: 41.6 }, T0)).toMatchObject({
      percent: 42,
    });
    expect(nextUpdateState(downloading, { kind: 'progress', percent: 180 }, T0)).toMatchObject({
      percent: 100,
    });
    expect(nextUpdateState(downloading, { kind: 'downloaded', version: '0.2.0' }, T0)).toEqual({
      phase: 'ready',
      version: '0.2.0',
    });
  });

  it('remembers when it found nothing newer', () => {
    expect(run([{ kind: 'checking' }, { kind: 'not-available' }])).toEqual({
      phase: 'idle',
      lastCheckAt: T0,
    });
  });

  it('turns a failed check, download or install into a failure that counts, with its first line only', () => {
    const first = run([
      { kind: 'checking' },
      { kind: 'available', version: '0.2.0' },
      {
        kind: 'error',
        message: 'sha512 checksum mismatch, expected abc, got def\n    at DigestTransform.validate',
      },
    ]);
    expect(first).toEqual({
      phase: 'failed',
      message: 'sha512 checksum mismatch, expected abc, got def',
      at: T0,
      failures: 1,
      manual: false,
    });
    const second = nextUpdateState(
      nextUpdateState(first, { kind: 'checking' }, T0 + HOUR),
      { kind: 'error', message: 'x' },
      T0 + HOUR,
    );
    // The retry's check is no success: the count goes on until something works.
    expect(second).toMatchObject({ failures: 2 });
    expect(nextUpdateState(second, { kind: 'not-available' }, T0 + 2 * HOUR)).toEqual({
      phase: 'idle',
      lastCheckAt: T0 + 2 * HOUR,
    });
    const again = nextUpdateState(first, { kind: 'error', message: 'HttpError: 404' }, T0 + HOUR);
    expect(again).toMatchObject({ failures: 2, at: T0 + HOUR });
    // An update that cannot be installed is a failure too: the next check downloads it again.
    expect(
      nextUpdateState(
        { phase: 'ready', version: '0.2.0' },
        { kind: 'error', message: 'installer missing' },
        T0,
      ),
    ).toMatchObject({
      phase: 'failed',
      failures: 1,
    });
    expect(nextUpdateState({ phase: 'idle' }, { kind: 'error', message: '' }, T0)).toMatchObject({
      message: 'Unknown error',
    });
  });

  it("keeps whether a check was the operator's until it ends", () => {
    const asked = nextUpdateState({ phase: 'idle' }, { kind: 'checking' }, T0, true);
    expect(asked).toEqual({ phase: 'checking', manual: true, failures: 0 });
    expect(nextUpdateState(asked, { kind: 'error', message: 'offline' }, T0)).toMatchObject({ manual: true });
  });
});

describe('the tray', () => {
  it('offers "Restart to update (version)" once the update is downloaded', () => {
    const a = actions();
    const items = updateMenuItems(view({ phase: 'ready', version: '0.2.0' }), a);
    expect(items.map((item) => item.id)).toEqual(['auto-update', 'update']);
    expect(items[1]).toMatchObject({ label: 'Restart to update (0.2.0)' });
    click(items[1]);
    expect(a.restartToUpdate).toHaveBeenCalledTimes(1);
  });

  it('shows the download and the check as they run, without a click', () => {
    expect(
      updateMenuItems(
        view({ phase: 'downloading', version: '0.2.0', percent: 42, failures: 0 }),
        actions(),
      )[1],
    ).toMatchObject({
      label: 'Downloading update 0.2.0… 42%',
      enabled: false,
    });
    expect(
      updateMenuItems(view({ phase: 'checking', manual: true, failures: 0 }), actions())[1],
    ).toMatchObject({
      label: 'Checking for updates…',
      enabled: false,
    });
  });

  it('offers a check now, saying when the last try failed', () => {
    const a = actions();
    const idle = updateMenuItems(view({ phase: 'idle' }), a)[1];
    expect(idle).toMatchObject({ label: 'Check for updates' });
    click(idle);
    expect(a.checkForUpdates).toHaveBeenCalledTimes(1);
    const failed = updateMenuItems(
      view({
        phase: 'failed',
        message: 'net::ERR_NAME_NOT_RESOLVED on the release feed',
        at: T0,
        failures: 2,
        manual: false,
      }),
      a,
    )[1];
    expect(failed?.label).toBe(
      'Check for updates (the last try failed: net::ERR_NAME_NOT_RESOLVED on the relea…)',
    );
  });

  it('switches the automatic checks from a checkbox', () => {
    const a = actions();
    const on = updateMenuItems(view({ phase: 'idle' }), a)[0];
    expect(on).toMatchObject({ type: 'checkbox', checked: true, label: 'Update automatically' });
    click(on, false);
    expect(a.setAutoUpdate).toHaveBeenCalledWith(false);
    expect(updateMenuItems(view({ phase: 'idle' }, { mode: 'manual' }), a)[0]).toMatchObject({
      checked: false,
    });
  });

  it('points an unsigned build to the releases page, and a build from source to nothing', () => {
    const a = actions();
    const unsigned = updateMenuItems(
      view(
        { phase: 'idle' },
        { mode: 'unsigned', releasesUrl: 'https://github.com/someone/agent-bridge/releases' },
      ),
      a,
    );
    expect(unsigned.map((item) => item.id)).toEqual(['update']);
    click(unsigned[0]);
    expect(a.openReleases).toHaveBeenCalledWith('https://github.com/someone/agent-bridge/releases/latest');
    expect(updateMenuItems(view({ phase: 'idle' }, { mode: 'unsigned' }), a)).toEqual([]);
    expect(updateMenuItems(view({ phase: 'idle' }, { mode: 'source' }), a)).toEqual([]);
  });

  it('puts the update items after start at login, before quit', () => {
    const shell: ShellState = {
      tunnel: { status: 'off' },
      gateway: { status: 'configured', live: true },
      registry: { status: 'unregistered' },
      access: { pending: 0 },
      startAtLogin: false,
      update: view({ phase: 'ready', version: '0.2.0' }),
    };
    const menuActions = { ...actions() } as unknown as MenuActions;
    expect(
      menuTemplate(shell, menuActions)
        .map((item) => item.id ?? item.type)
        .slice(-5),
    ).toEqual(['start-at-login', 'auto-update', 'update', 'separator', 'quit']);
  });
});

describe('what the operator is told', () => {
  it('announces an update ready to install, once per version', () => {
    const downloading = view({ phase: 'downloading', version: '0.2.0', percent: 99, failures: 0 });
    const ready = view({ phase: 'ready', version: '0.2.0' });
    expect(updateNotice(downloading, ready)).toEqual({
      kind: 'update-ready',
      title: 'Agent Bridge 0.2.0 is ready',
      body: 'Choose "Restart to update" in the tray menu to install it now; otherwise it installs when you quit.',
    });
    expect(updateNotice(ready, ready)).toBeUndefined();
    expect(updateNotice(ready, view({ phase: 'ready', version: '0.2.1' }))?.title).toBe(
      'Agent Bridge 0.2.1 is ready',
    );
  });

  it('answers a check the operator asked for, and keeps quiet about automatic ones', () => {
    const asked = view({ phase: 'checking', manual: true, failures: 0 });
    const automatic = view({ phase: 'checking', manual: false, failures: 0 });
    const upToDate = view({ phase: 'idle', lastCheckAt: T0 });
    const failed = view({ phase: 'failed', message: 'HttpError: 503', at: T0, failures: 1, manual: true });
    expect(updateNotice(asked, upToDate)).toEqual({
      kind: 'update-checked',
      title: 'Agent Bridge is up to date',
      body: 'Version 0.1.0 is the newest.',
    });
    expect(updateNotice(asked, failed)).toEqual({
      kind: 'update-checked',
      title: 'Could not check for updates',
      body: 'HttpError: 503 Agent Bridge tries again later.',
    });
    expect(updateNotice(automatic, upToDate)).toBeUndefined();
    expect(updateNotice(automatic, failed)).toBeUndefined();
  });

  it('goes through the notification policy with the rest of the shell state', () => {
    const base: ShellState = {
      tunnel: { status: 'off' },
      gateway: { status: 'configured', live: true },
      registry: { status: 'unregistered' },
      access: { pending: 0 },
      startAtLogin: false,
    };
    const notices = noticesFor(
      { ...base, update: view({ phase: 'downloading', version: '0.2.0', percent: 100, failures: 0 }) },
      { ...base, update: view({ phase: 'ready', version: '0.2.0' }) },
    );
    expect(notices.map((notice) => notice.kind)).toEqual(['update-ready']);
    expect(noticesFor(base, base)).toEqual([]);
  });
});
