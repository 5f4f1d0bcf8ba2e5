import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, tempDir, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

// electron/main.ts as an installed, signed build runs it, against the electron stand-in and a stand-in for
// electron-updater's autoUpdater (test/fixtures/electron-standin/updater.ts; the real updater needs
// Electron's network stack and is run against a feed double in test/integration/update-feed.test.ts).
// The real core, console, settings store and a gateway double.
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
const updater = standin.updater;
const appPath = tempDir('agent-bridge-app-');
let gateway: GatewayDouble;
let peer: TestAgent | undefined;
let shell: LaunchedShell;

const item = (id: string) => standin.tray.item(id);
const shownTitles = () => standin.notifications.filter((n) => n.shown).map((n) => n.options.title);
const checks = () => calls.of('updater.checkForUpdates').length;

beforeAll(async () => {
  // What the release workflow's signing step writes into a signed build.
  mkdirSync(join(appPath, 'dist/electron'), { recursive: true });
  writeFileSync(
    join(appPath, 'dist/electron/build-info.json'),
    JSON.stringify({ signed: true, releasesUrl: 'https://github.com/someone/agent-bridge/releases' }),
  );
  gateway = await startGatewayDouble();
  shell = await launchShell({
    settings: {
      port: 0,
      consolePort: 0,
      tunnel: 'none',
      gatewayUrl: gateway.url,
      gatewayToken: gateway.token,
      devHttpPeers: true,
      // The caller below is let in at once: this test is about the restart, not consent.
      access: 'open',
    },
    standin: { isPackaged: true, appPath },
    notFirstRun: true,
  });
});

afterAll(async () => {
  try {
    await shell?.close();
  } finally {
    await peer?.close();
    await gateway?.close();
    rmSync(appPath, { recursive: true, force: true });
  }
});

describe('updates in an installed, signed app', () => {
  it('checks at start, and says so in the tray', async () => {
    await until(() => checks() === 1, 5000, 'the check at start');
    // Downloads by themselves, and a downloaded update installs when the app quits.
    expect(updater.autoDownload).toBe(true);
    expect(updater.autoInstallOnAppQuit).toBe(true);
    await until(() => item('update').label === 'Checking for updates…', 5000, 'the tray to show the check');
    expect(item('update').enabled).toBe(false);
    expect(item('auto-update')).toMatchObject({ type: 'checkbox', checked: true });
  });

  it('answers a check the operator asks for: up to date', async () => {
    updater.emit('update-not-available', { version: '0.0.0-standin' });
    await until(() => item('update').label === 'Check for updates', 5000, 'the check to end');
    // No word about an automatic check.
    expect(shownTitles()).not.toContain('Agent Bridge is up to date');
    standin.tray.click('update');
    expect(checks()).toBe(2);
    updater.emit('update-not-available', { version: '0.0.0-standin' });
    await until(() => shownTitles().includes('Agent Bridge is up to date'), 5000, 'the up-to-date notice');
  });

  it('saves the automatic-updates switch from the tray in the settings, and redraws it from them', async () => {
    const saved = () =>
      (JSON.parse(readFileSync(join(shell.userData, 'settings.json'), 'utf8')) as { autoUpdate?: boolean })
        .autoUpdate;
    const menus = calls.of('tray.setContextMenu').length;
    standin.tray.click('auto-update');
    await until(() => saved() === false, 5000, 'autoUpdate: false in settings.json');
    expect(
      (await shell.api<{ settings: { autoUpdate: boolean } }>('/api/settings')).settings.autoUpdate,
    ).toBe(false);
    await until(() => calls.of('tray.setContextMenu').length > menus, 5000, 'the menu redrawn');
    expect(item('auto-update').checked).toBe(false);
    standin.tray.click('auto-update');
    await until(() => saved() === true, 5000, 'autoUpdate: true again');
  });

  it('downloads a newer version in the background, then offers "Restart to update" and notifies', async () => {
    standin.tray.click('update');
    updater.emit('update-available', { version: '0.2.0' });
    await until(() => item('update').label === 'Downloading update 0.2.0… 0%', 5000, 'the download');
    updater.emit('download-progress', { percent: 57.2 });
    await until(() => item('update').label === 'Downloading update 0.2.0… 57%', 5000, 'the progress');
    updater.emit('update-downloaded', { version: '0.2.0' });
    await until(() => item('update').label === 'Restart to update (0.2.0)', 5000, 'the restart item');
    expect(item('update').enabled).not.toBe(false);
    await until(() => shownTitles().includes('Agent Bridge 0.2.0 is ready'), 5000, 'the update-ready notice');
  });

  it('on "Restart to update", drains the agent like a quit (the accepted task completes), then installs', async () => {
    peer = await startAgent();
    const { agent } = await shell.status();
    // A task the gateway takes a moment over: accepted before the restart, it must not be lost.
    gateway.set({ behaviour: 'slow-first-byte', firstByteDelayMs: 1000 });
    const accepted = await post(
      agent.localUrl,
      PATHS.async,
      sign(envelope(peer.id, agent.id, 'async', { message: 'finish me' }), peer.app.keys.signer),
    );
    expect(accepted.status, accepted.text).toBe(202);
    const taskId = accepted.json.taskId as string;
    await until(
      () => gateway.requests.some((request) => request.path === '/v1/chat/completions'),
      5000,
      'the task to reach the gateway',
    );

    let atInstall: { consoleUrl: unknown; task: unknown } | undefined;
    calls.onCall('updater.quitAndInstall', () => {
      const file = readdirSync(join(shell.userData, 'tasks')).find((name) => name.includes(taskId));
      atInstall = {
        // The console, once closed, no longer names its URL (console.json keeps only the token).
        consoleUrl: (JSON.parse(readFileSync(shell.consoleFile, 'utf8')) as { url?: unknown }).url,
        task: file && JSON.parse(readFileSync(join(shell.userData, 'tasks', file), 'utf8')),
      };
    });
    standin.tray.click('update');
    await until(() => standin.app.quitted, 15_000, 'the app to stop its core and quit for the installer');

    // The installer ran only once the agent had stopped, with the task finished and recorded.
    expect(calls.of('updater.quitAndInstall').map((call) => call.args)).toEqual([[true, true]]);
    expect(atInstall?.consoleUrl).toBeFalsy();
    expect(atInstall?.task).toMatchObject({ taskId, status: 'done' });
    expect(gateway.requests.filter((request) => request.aborted)).toEqual([]);
    await expect(fetch(`${agent.localUrl}/.well-known/agent.json`)).rejects.toThrow();
    // The updater's quit found the agent stopped: nothing prevented it, and the app did not restart as it was.
    expect(calls.of('before-quit.preventDefault')).toEqual([]);
    expect(calls.of('app.relaunch')).toEqual([]);
    expect(standin.tray.destroyed).toBe(true);
  });
});
