import { BrowserWindow, shell } from 'electron';
import {
  consolePageUrl,
  externalLinkAction,
  isConsoleNavigation,
  tokenTaken,
  windowNavigation,
  windowOptions,
  type ConsolePage,
} from './decisions/window-options.js';

/** The console window: created on demand, hidden (not destroyed) on close, so the agent keeps running. */
export class ConsoleWindow {
  private window: BrowserWindow | undefined;
  private quitting = false;
  /** A page asked for before the renderer took its token (see `windowNavigation`). */
  private pendingPage: ConsolePage | undefined;

  constructor(
    private readonly consoleUrl: string,
    /** Asked at each load: the operator may have replaced the token since the window was made. */
    private readonly token: () => string,
    private readonly iconPath: string,
  ) {}

  /** Shows the window, on `page` when given (else where it was). */
  show(page?: ConsolePage): void {
    const window = this.window ?? this.create();
    const { load, pending } = windowNavigation({
      consoleUrl: this.consoleUrl,
      token: this.token(),
      currentUrl: window.webContents.getURL() || undefined,
      page,
    });
    if (pending) this.pendingPage = pending;
    if (load) this.load(window, load);
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
  }

  /** Lets the window really close (on quit) instead of hiding. */
  allowClose(): void {
    this.quitting = true;
    this.window?.close();
  }

  private create(): BrowserWindow {
    const window = new BrowserWindow(windowOptions(this.iconPath));
    this.window = window;
    const { webContents } = window;
    // Only the console's own origin; anything else goes to the browser (https) or nowhere.
    webContents.on('will-navigate', (event, url) => {
      if (isConsoleNavigation(url, this.consoleUrl)) return;
      event.preventDefault();
      if (externalLinkAction(url) === 'open-in-browser') void shell.openExternal(url);
    });
    webContents.setWindowOpenHandler(({ url }) => {
      if (externalLinkAction(url) === 'open-in-browser') void shell.openExternal(url);
      return { action: 'deny' };
    });
    // No remote content: the window never needs a permission (camera, notifications, ...).
    webContents.session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    // The renderer erases `#token=` once it has stored the token: then a page asked for meanwhile can open.
    const openPending = () => {
      if (!this.pendingPage || !tokenTaken(webContents.getURL(), this.consoleUrl)) return;
      this.load(window, consolePageUrl(this.consoleUrl, this.pendingPage));
      this.pendingPage = undefined;
    };
    webContents.on('did-navigate-in-page', openPending);
    webContents.on('did-finish-load', openPending);
    window.on('close', (event) => {
      if (this.quitting) return;
      event.preventDefault();
      window.hide();
    });
    window.on('closed', () => {
      this.window = undefined;
      this.pendingPage = undefined;
    });
    window.once('ready-to-show', () => window.show());
    return window;
  }

  private load(window: BrowserWindow, url: string): void {
    // A failed load shows Chromium's error page in the window; the rejection adds nothing to that.
    window.loadURL(url).catch(() => undefined);
  }
}
