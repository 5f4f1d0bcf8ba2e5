// The desktop shell: wiring only. Decisions live in ./decisions (pure, unit-tested); the agent is src/app.
import { app, clipboard, dialog } from 'electron';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loginItemSettings, shouldShowWindow } from './decisions/login-item.js';
import type { ShellState } from './decisions/shell-state.js';
import { readShellState, startCore, type Core } from './core.js';
import { Notifier } from './notifier.js';
import { AppTray } from './tray.js';
import { ConsoleWindow } from './window.js';

const here = dirname(fileURLToPath(import.meta.url));
const iconDir = join(here, 'icons');
const staticDir = join(here, '..', 'renderer');

// One instance: a second launch focuses the first one's window.
if (!app.requestSingleInstanceLock()) app.quit();
else void main();

async function main(): Promise<void> {
  app.setName('Agent Bridge'); // userData is then "<appData>/Agent Bridge", the headless data dir too
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
      `${(error as Error).message}\n\nSee the README's troubleshooting section.`,
    );
    app.exit(1);
    return;
  }
  const window = new ConsoleWindow(core.console.url, core.console.token, join(iconDir, 'window.png'));
  const notifier = new Notifier((page) => window.show(page));
  const startAtLogin = () => app.getLoginItemSettings().openAtLogin;
  const tray = new AppTray(
    iconDir,
    {
      copyPublicUrl: (url) => clipboard.writeText(url),
      openConsole: () => window.show(),
      openAccess: () => window.show('access'),
      runSelfTest: () => void core.app.selfTest().then(() => window.show()),
      startTunnel: () => core.app.startTunnel(),
      stopTunnel: () => core.app.stopTunnel(),
      register: () =>
        void core.app.register().catch(() => undefined /* shown by the notifier and the console */),
      rotateKey: () => core.app.keys.rotate(),
      setStartAtLogin: (enabled) => app.setLoginItemSettings(loginItemSettings(enabled)),
      quit: () => app.quit(),
    },
    () => window.show(),
  );

  // Events come in bursts and each read is an HTTP call: a read that answers after a newer one is stale.
  let reads = 0;
  let drawn = 0;
  const refresh = async () => {
    const read = ++reads;
    let state: ShellState;
    try {
      state = await readShellState(core, startAtLogin());
    } catch {
      return; // The console is stopping; the next event refreshes.
    }
    if (read < drawn) return;
    drawn = read;
    tray.update(state);
    notifier.observe(state);
  };
  for (const event of ['tunnel', 'gateway', 'gatewayAgent', 'registry', 'card', 'address', 'access'] as const)
    core.app.on(event, () => void refresh());
  await refresh();

  app.on('second-instance', () => window.show());
  if (shouldShowWindow(process.argv, app.getLoginItemSettings().wasOpenedAtLogin ?? false, firstRun))
    window.show();
  if (firstRun) writeFileSync(firstRunMarker, new Date().toISOString());

  // Closing the window keeps the agent running in the tray; quitting stops it cleanly first.
  app.on('window-all-closed', () => undefined);
  let stopped = false;
  app.on('before-quit', (event) => {
    if (stopped) return;
    event.preventDefault();
    notifier.stop();
    window.allowClose();
    void core.stop().finally(() => {
      stopped = true;
      tray.destroy();
      app.quit();
    });
  });
}
