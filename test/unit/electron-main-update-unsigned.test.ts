import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

// An installed build that was not signed (the release workflow ran without the signing secrets): an update
// could not be verified, so it never checks, whatever the setting, and points to the releases page. Linux
// builds are such builds; this one also starts at login the Linux way (Electron has no login items there).
vi.mock(
  'electron',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().module,
);
vi.mock(
  'electron-updater',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().updaterModule,
);

const standin = electronStandin();
const calls = standin.recorder;
const appPath = tempDir('agent-bridge-app-');
const xdgConfig = tempDir('agent-bridge-xdg-');
const previousXdg = process.env.XDG_CONFIG_HOME;
let shell: LaunchedShell;

beforeAll(async () => {
  mkdirSync(join(appPath, 'dist/electron'), { recursive: true });
  writeFileSync(
    join(appPath, 'dist/electron/build-info.json'),
    JSON.stringify({ signed: false, releasesUrl: 'https://github.com/someone/agent-bridge/releases' }),
  );
  process.env.XDG_CONFIG_HOME = xdgConfig;
  shell = await launchShell({
    settings: { port: 0, consolePort: 0, tunnel: 'none', autoUpdate: true },
    standin: { isPackaged: true, appPath },
    notFirstRun: true,
  });
});

afterAll(async () => {
  try {
    await shell?.close();
  } finally {
    if (previousXdg === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = previousXdg;
    rmSync(appPath, { recursive: true, force: true });
    rmSync(xdgConfig, { recursive: true, force: true });
  }
});

it('never checks for updates, and offers the releases page instead', async () => {
  await until(() => calls.of('tray.setContextMenu').length > 0, 5000, 'the tray menu');
  // Events that redraw the tray would also plan checks: none may start.
  await shell.api('/api/tunnel/stop', { method: 'POST' });
  await until(() => calls.of('tray.setContextMenu').length > 1, 5000, 'a second redraw');
  expect(calls.of('updater.checkForUpdates')).toEqual([]);
  expect(() => standin.tray.item('auto-update')).toThrow(/no item "auto-update"/);
  expect(standin.tray.item('update').label).toBe('Download new versions from the releases page…');
  standin.tray.click('update');
  expect(calls.of('shell.openExternal').map((call) => call.args[0])).toEqual([
    'https://github.com/someone/agent-bridge/releases/latest',
  ]);
});

it.skipIf(process.platform !== 'linux')(
  'starts at login on Linux through an XDG autostart entry, hidden in the tray',
  async () => {
    const entry = join(xdgConfig, 'autostart', 'agent-bridge.desktop');
    const menus = () => calls.of('tray.setContextMenu').length;
    expect(standin.tray.item('start-at-login').checked).toBe(false);
    let before = menus();
    standin.tray.click('start-at-login');
    expect(existsSync(entry)).toBe(true);
    expect(readFileSync(entry, 'utf8')).toContain(`Exec=${process.execPath} --hidden\n`);
    await until(() => menus() > before, 5000, 'the menu redrawn');
    expect(standin.tray.item('start-at-login').checked).toBe(true);
    before = menus();
    standin.tray.click('start-at-login');
    expect(existsSync(entry)).toBe(false);
    await until(() => menus() > before, 5000, 'the menu redrawn');
    expect(standin.tray.item('start-at-login').checked).toBe(false);
    expect(calls.of('app.setLoginItemSettings')).toEqual([]);
  },
);
