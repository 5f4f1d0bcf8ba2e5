import type { BrowserWindowConstructorOptions } from 'electron';

/** The console window: no Node, isolated, sandboxed; it shows only the console's own pages. */
export function windowOptions(iconPath?: string): BrowserWindowConstructorOptions {
  return {
    width: 1240,
    height: 860,
    minWidth: 720,
    minHeight: 520,
    show: false,
    title: 'Agent Bridge',
    autoHideMenuBar: true,
    ...(iconPath ? { icon: iconPath } : {}),
    webPreferences: {
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      spellcheck: false,
    },
  };
}

/** Navigation stays on the console's own origin (http://127.0.0.1:PORT); anything else is refused. */
export function isConsoleNavigation(url: string, consoleOrigin: string): boolean {
  try {
    return new URL(url).origin === new URL(consoleOrigin).origin;
  } catch {
    return false;
  }
}

/** Links out of the console open in the system browser, and only over https. */
export function externalLinkAction(url: string): 'open-in-browser' | 'deny' {
  try {
    return new URL(url).protocol === 'https:' ? 'open-in-browser' : 'deny';
  } catch {
    return 'deny';
  }
}

/** The console URL for the window: the token travels in the fragment, never to a server or a log. */
export function consoleWindowUrl(consoleUrl: string, token: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/#token=${encodeURIComponent(token)}`;
}
