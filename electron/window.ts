import { BrowserWindow, shell } from 'electron';
import {
  consoleWindowUrl,
  externalLinkAction,
  isConsoleNavigation,
  windowOptions,
} from './decisions/window-options.js';

/** The console window: created on demand, hidden (not destroyed) on close, so the agent keeps running. */
export class ConsoleWindow {
  private window: BrowserWindow | undefined;
  private quitting = false;

  constructor(
    private readonly consoleUrl: string,
    private readonly token: string,
    private readonly iconPath: string,
  ) {}

  show(): void {
    const window = this.window ?? this.create();
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
    window.on('close', (event) => {
      if (this.quitting) return;
      event.preventDefault();
      window.hide();
    });
    window.on('closed', () => (this.window = undefined));
    window.once('ready-to-show', () => window.show());
    void window.loadURL(consoleWindowUrl(this.consoleUrl, this.token));
    return window;
  }
}
