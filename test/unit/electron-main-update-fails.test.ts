import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

// An update that cannot be installed (electron-updater reports an error instead of starting its installer):
// the agent was already drained for the restart, so the app restarts as it is, on the version it has.
// This launch also takes its data folder from AGENT_BRIDGE_DATA_DIR (the packaged-app smoke test does).
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
let shell: LaunchedShell;

beforeAll(async () => {
  mkdirSync(join(appPath, 'dist/electron'), { recursive: true });
  writeFileSync(join(appPath, 'dist/electron/build-info.json'), JSON.stringify({ signed: true }));
  shell = await launchShell({
    settings: { port: 0, consolePort: 0, tunnel: 'none' },
    standin: { isPackaged: true, appPath },
    notFirstRun: true,
    // An operator who set AGENT_BRIDGE_DATA_DIR for `serve` gets the same agent on the desktop.
    dataDirFromEnv: true,
  });
});

afterAll(async () => {
  try {
    await shell?.close();
  } finally {
    rmSync(appPath, { recursive: true, force: true });
  }
});

it('takes its data folder from AGENT_BRIDGE_DATA_DIR before Electron is ready, as serve does', () => {
  expect(calls.of('app.setPath').map((call) => call.args)).toEqual([['userData', shell.userData, false]]);
  expect(calls.indexOf('app.setPath')).toBeLessThan(calls.indexOf('app.whenReady'));
});

it('restarts as it is when the downloaded update cannot be installed', async () => {
  await until(() => calls.of('updater.checkForUpdates').length === 1, 5000, 'the check at start');
  standin.updater.emit('update-available', { version: '0.2.0' });
  standin.updater.emit('update-downloaded', { version: '0.2.0' });
  await until(
    () => standin.tray.item('update').label === 'Restart to update (0.2.0)',
    5000,
    'the restart item',
  );

  standin.updater.installFails = true;
  standin.tray.click('update');
  await until(() => standin.app.quitted, 15_000, 'the app to quit');
  expect(calls.indexOf('updater.quitAndInstall')).toBeGreaterThan(calls.indexOf('tray.destroy'));
  expect(calls.lastIndexOf('app.relaunch')).toBeGreaterThan(calls.indexOf('updater.quitAndInstall'));
  expect(calls.lastIndexOf('app.quit')).toBeGreaterThan(calls.lastIndexOf('app.relaunch'));
  await expect(fetch(`${shell.console.url}/`)).rejects.toThrow();
});
