/** Start at login: an opt-in the operator turns on; the app then starts hidden, in the tray. */
export const HIDDEN_FLAG = '--hidden';

export interface LoginItemSettings {
  openAtLogin: boolean;
  openAsHidden: boolean;
  args: string[];
}

export function loginItemSettings(enabled: boolean): LoginItemSettings {
  // openAsHidden is macOS's way; elsewhere the flag tells the app not to open its window.
  return { openAtLogin: enabled, openAsHidden: enabled, args: enabled ? [HIDDEN_FLAG] : [] };
}

/** Whether this launch shows the window: not when started at login, always on the first run. */
export function shouldShowWindow(
  argv: readonly string[],
  wasOpenedAtLogin: boolean,
  firstRun: boolean,
): boolean {
  if (firstRun) return true;
  return !argv.includes(HIDDEN_FLAG) && !wasOpenedAtLogin;
}
