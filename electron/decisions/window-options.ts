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

/** The console's pages, routed in the URL fragment (`#/access`). */
export type ConsolePage = 'overview' | 'traffic' | 'keys' | 'registry' | 'settings' | 'access';

/** A page of the already loaded console: a same-document navigation, so the token it keeps stays. */
export function consolePageUrl(consoleUrl: string, page: ConsolePage): string {
  return `${consoleUrl.replace(/\/+$/, '')}/#/${page}`;
}

/**
 * Whether the window shows the console with its token taken: on the console's origin, and the renderer has
 * erased `#token=` from the address bar (it does so once the token is in its sessionStorage).
 */
export function tokenTaken(currentUrl: string, consoleUrl: string): boolean {
  if (!isConsoleNavigation(currentUrl, consoleUrl)) return false;
  return !new URL(currentUrl).hash.includes('token=');
}

export interface WindowNavigation {
  /** A URL to load now, if any. */
  load?: string;
  /** A page to open once the renderer has taken the token (`tokenTaken`). */
  pending?: ConsolePage;
}

/**
 * What `show(page)` loads. The first load carries the token; a page is opened only after the renderer took
 * it, since loading `#/page` first would replace `#token=` before it was read and leave the window without
 * access. A window showing anything else (a failed load) gets the token URL again.
 */
export function windowNavigation(input: {
  consoleUrl: string;
  token: string;
  /** What the window shows now; undefined when there is no window yet. */
  currentUrl: string | undefined;
  page: ConsolePage | undefined;
}): WindowNavigation {
  const { consoleUrl, token, currentUrl, page } = input;
  const onConsole = currentUrl !== undefined && isConsoleNavigation(currentUrl, consoleUrl);
  if (!onConsole) return { load: consoleWindowUrl(consoleUrl, token), ...(page ? { pending: page } : {}) };
  if (!page) return {};
  if (!tokenTaken(currentUrl, consoleUrl)) return { pending: page };
  return { load: consolePageUrl(consoleUrl, page) };
}
