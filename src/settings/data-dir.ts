import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

/** The folder name under the OS app-data folder; Electron's userData uses the app's product name. */
export const PRODUCT_NAME = 'Agent Bridge';

/**
 * Where settings, keys and state live: `AGENT_BRIDGE_DATA_DIR`, else the per-user app-data folder that
 * Electron's `app.getPath('userData')` also resolves to, so the desktop app and `serve` share one identity.
 */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const explicit = env.AGENT_BRIDGE_DATA_DIR;
  if (explicit) return explicit;
  if (platform === 'win32') {
    const home = env.USERPROFILE || homedir();
    return win32.join(env.APPDATA || win32.join(home, 'AppData', 'Roaming'), PRODUCT_NAME);
  }
  const home = env.HOME || homedir();
  if (platform === 'darwin') return posix.join(home, 'Library', 'Application Support', PRODUCT_NAME);
  // Linux and other Unixes: the XDG base directory, as Electron (Chromium) resolves it.
  return posix.join(env.XDG_CONFIG_HOME || posix.join(home, '.config'), PRODUCT_NAME);
}
