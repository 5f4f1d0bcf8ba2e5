import type { App } from 'electron';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { AUTOSTART_FILE, HIDDEN_FLAG, autostartEntry, loginItemSettings } from './decisions/login-item.js';

/** Start at login: Electron's login items on macOS and Windows, an XDG autostart entry on Linux. */
export interface StartAtLogin {
  enabled(): boolean;
  set(enabled: boolean): void;
}

export function startAtLogin(app: App, env: NodeJS.ProcessEnv = process.env): StartAtLogin {
  if (process.platform !== 'linux') {
    return {
      enabled: () => app.getLoginItemSettings().openAtLogin,
      set: (enabled) => app.setLoginItemSettings(loginItemSettings(enabled)),
    };
  }
  const file = join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'autostart', AUTOSTART_FILE);
  // An AppImage runs from a temporary mount: its own file ($APPIMAGE) is what starts it again.
  const command = app.isPackaged
    ? [env.APPIMAGE || process.execPath, HIDDEN_FLAG]
    : [process.execPath, app.getAppPath(), HIDDEN_FLAG];
  return {
    enabled: () => existsSync(file),
    set(enabled) {
      if (!enabled) return rmSync(file, { force: true });
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, autostartEntry(command));
    },
  };
}
