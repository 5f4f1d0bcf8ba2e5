import ElectronStore from 'electron-store';
import { AgentBridgeApp } from '../src/app.js';
import { startConsole } from '../src/console/console-server.js';
import { installConsoleGuard } from '../src/lib/console-guard.js';
import { settingsConfOptions, openSettingsStore } from '../src/settings/store.js';
import type { Settings } from '../src/settings/schema.js';
import type { StatusResponse } from '../src/protocol/console-api.js';
import { shellStateFrom, type ShellState } from './decisions/shell-state.js';
import type { UpdateView } from './decisions/updates.js';

export interface Core {
  app: AgentBridgeApp;
  console: { url: string; token: string; close(): Promise<void> };
  /** Stops the agent (in-flight work finishes or fails), then the console; state is flushed. */
  stop(): Promise<void>;
}

/**
 * Starts the same core as `npm run serve`, with settings in electron-store (a `conf` subclass, same schema
 * and file) in the app's user-data folder, which is also the headless data dir.
 */
export async function startCore(dataDir: string, staticDir: string): Promise<Core> {
  // As `serve` does: what a library prints may quote a caller (src/lib/console-guard.ts).
  installConsoleGuard();
  // electron-store names the file by `name` (default "config") and overwrites conf's `configName` with it:
  // without this the desktop app would keep its settings in config.json, apart from `npm run serve`.
  const { configName, ...options } = settingsConfOptions(dataDir);
  const conf = new ElectronStore<Settings>({ ...options, name: configName });
  const store = openSettingsStore(dataDir, conf);
  const app = new AgentBridgeApp({ dataDir, settings: store.get() });
  await app.start();
  const consoleServer = await startConsole({ app, store, dataDir, port: store.get().consolePort, staticDir });
  return {
    app,
    console: consoleServer,
    async stop() {
      await app.stop();
      await consoleServer.close();
    },
  };
}

/** The shell's view of the core, read from the console's own status so both show the same thing. */
export async function readShellState(
  core: Core,
  startAtLogin: boolean,
  update?: UpdateView,
): Promise<ShellState> {
  const response = await fetch(`${core.console.url}/api/status`, {
    headers: { authorization: `Bearer ${core.console.token}` },
  });
  if (!response.ok) throw new Error(`console status answered HTTP ${response.status}`);
  return shellStateFrom((await response.json()) as StatusResponse, startAtLogin, update);
}

/** Changes settings through the console's own API: validated and saved as the Settings page does. */
export async function writeSettings(core: Core, change: Partial<Settings>): Promise<void> {
  const response = await fetch(`${core.console.url}/api/settings`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${core.console.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(change),
  });
  if (!response.ok) throw new Error(`console settings answered HTTP ${response.status}`);
}
