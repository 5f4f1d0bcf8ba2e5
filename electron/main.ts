// The desktop shell: wiring only. Decisions live in ./decisions (pure, unit-tested); the agent is src/app.
import { app, clipboard, dialog, shell } from 'electron';
import electronUpdater from 'electron-updater';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBuildInfo } from './build-info.js';
import { shouldShowWindow } from './decisions/login-item.js';
import type { ShellState } from './decisions/shell-state.js';
import { INSTALL_GIVE_UP_MS } from './decisions/updates.js';
import { readShellState, startCore, writeSettings, type Core } from './core.js';
import { startAtLogin as loginItem } from './login-item.js';
import { Notifier } from './notifier.js';
import { AppTray } from './tray.js';
import { AppUpdates } from './updates.js';
import { ConsoleWindow } from './window.js';

const here = dirname(fileURLToPath(import.meta.url));
const iconDir = join(here, 'icons');
const staticDir = join(here, '..', 'renderer');

// One instance: a second launch focuses the first one's window.
if (!app.requestSingleInstanceLock()) app.quit();
else void main();

async function main(): Promise<void> {
  app.setName('Agent Bridge'); // userData is then "<appData>/Agent Bridge", the headless data dir too
  // The same override as `serve` (src/settings/data-dir.ts), set before Chromium opens its profile there.
  const dataDirOverride = process.env.AGENT_BRIDGE_DATA_DIR;
  if (dataDirOverride) app.setPath('userData', dataDirOverride);
  await app.whenReady();
  const dataDir = app.getPath('userData');
  const firstRunMarker = join(dataDir, '.first-run-done');
  const firstRun = !existsSync(firstRunMarker);

  let core: Core;
  try {
    core = await startCore(dataDir, staticDir);
  } catch (error) {
    dialog.showErrorBox(
      'Agent Bridge could not start',
      `${(error as Error).message}\n\nSee Troubleshooting in Agent Bridge's documentation (docs/troubleshooting.md).`,
    );
    app.exit(1);
    return;
  }
  const window = new ConsoleWindow(core.console.url, () => core.console.token, join(iconDir, 'window.png'));
  const notifier = new Notifier((page) => window.show(page));
  const login = loginItem(app);
  const updates = new AppUpdates({
    current: app.getVersion(),
    build: readBuildInfo(app.getAppPath()),
    packaged: app.isPackaged,
    autoUpdate: () => core.app.currentSettings.autoUpdate,
    createUpdater: () => electronUpdater.autoUpdater,
    onChange: () => void refresh(),
  });
  const tray = new AppTray(
    iconDir,
    {
      copyPublicUrl: (url) => clipboard.writeText(url),
      openConsole: () => window.show(),
      openAccess: () => window.show('access'),
      runSelfTest: () => void core.app.selfTest().then(() => window.show()),
      startTunnel: () => core.app.publicAddress.startTunnel(),
      stopTunnel: () => core.app.publicAddress.stopTunnel(),
      register: () =>
        void core.app.register().catch(() => undefined /* shown by the notifier and the console */),
      rotateKey: () => core.app.keys.rotate(),
      setStartAtLogin: (enabled) => {
        login.set(enabled);
        void refresh();
      },
      checkForUpdates: () => updates.check(true),
      restartToUpdate: () => void restartToUpdate(),
      setAutoUpdate: (enabled) =>
        void writeSettings(core, { autoUpdate: enabled })
          .catch((error: Error) => console.error(`Could not save the update setting: ${error.message}`))
          .then(() => refresh()),
      openReleases: (url) => void shell.openExternal(url),
      quit: () => app.quit(),
    },
    () => window.show(),
  );

  // The packaged-app smoke test (test/e2e/packaged-app.e2e.test.ts) looks at the tray from the main
  // process: Electron has no API that lists an app's trays.
  Object.assign(globalThis, { [Symbol.for('agent-bridge.tray')]: tray.tray });

  let stopping: Promise<void> | undefined;
  let stopped = false;
  // Events come in bursts and each read is an HTTP call: a read that answers after a newer one is stale.
  let reads = 0;
  let drawn = 0;
  const refresh = async () => {
    const read = ++reads;
    let state: ShellState;
    try {
      state = await readShellState(core, login.enabled(), updates.view());
    } catch {
      return; // The console is stopping; the next event refreshes.
    }
    if (read < drawn || stopping) return;
    drawn = read;
    tray.update(state);
    notifier.observe(state);
    updates.sync(); // the console may have changed the update setting
  };
  for (const event of ['tunnel', 'gateway', 'gatewayAgent', 'registry', 'card', 'address', 'access'] as const)
    core.app.on(event, () => void refresh());
  await refresh();

  app.on('second-instance', () => window.show());
  if (shouldShowWindow(process.argv, app.getLoginItemSettings().wasOpenedAtLogin ?? false, firstRun))
    window.show();
  if (firstRun) writeFileSync(firstRunMarker, new Date().toISOString());

  // Closing the window keeps the agent running in the tray. Quitting, and restarting for an update, stop
  // the agent first: in-flight work finishes or is recorded as failed, and state is flushed (src/app.ts).
  app.on('window-all-closed', () => undefined);
  const stopShell = () =>
    (stopping ??= (async () => {
      notifier.stop();
      updates.stop();
      window.allowClose();
      await core
        .stop()
        .catch((error: Error) => console.error(`The agent did not stop cleanly: ${error.message}`));
      stopped = true;
      tray.destroy();
    })());
  app.on('before-quit', (event) => {
    if (stopped) return;
    event.preventDefault();
    void stopShell().then(() => app.quit());
  });
  // The updater quits the app itself once its installer runs; if it cannot, the app restarts as it is.
  const restartAsIs = () => {
    app.relaunch();
    app.quit();
  };
  const restartToUpdate = async () => {
    await stopShell();
    if (!updates.install()) return restartAsIs();
    setTimeout(restartAsIs, INSTALL_GIVE_UP_MS).unref();
  };

  updates.sync(); // the first check, now that the agent runs
}
