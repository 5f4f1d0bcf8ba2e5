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

/** Linux has no login-item API in Electron: an XDG autostart entry (~/.config/autostart) starts the app. */
export const AUTOSTART_FILE = 'agent-bridge.desktop';

/** The autostart entry that runs `command` (the executable and its arguments) at login. */
export function autostartEntry(command: readonly string[]): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Agent Bridge',
    'Comment=Puts your own AI agent on the open agent network',
    `Exec=${command.map(execArgument).join(' ')}`,
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

// The Desktop Entry Specification's Exec quoting: an argument with a reserved character is double-quoted,
// with ", `, $ and \ escaped by a backslash; a literal % is written %% (field codes start with %).
function execArgument(argument: string): string {
  const escaped = argument.replace(/%/g, '%%');
  if (!/[\s"'\\><~|&;$*?#()`=]/.test(escaped)) return escaped;
  return `"${escaped.replace(/(["`$\\])/g, '\\$1')}"`;
}
