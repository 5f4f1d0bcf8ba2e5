import type { AppUpdater } from 'electron-updater';
import { isDeepStrictEqual } from 'node:util';
import type { BuildInfo } from './build-info.js';
import {
  initialUpdateState,
  nextCheckAt,
  nextUpdateState,
  updateMode,
  type UpdateMode,
  type UpdaterEvent,
  type UpdateState,
  type UpdateView,
} from './decisions/updates.js';

/** The part of electron-updater's updater the shell uses. */
export type Updater = Pick<
  AppUpdater,
  'autoDownload' | 'autoInstallOnAppQuit' | 'checkForUpdates' | 'quitAndInstall' | 'on' | 'removeListener'
>;

export interface AppUpdatesOptions {
  /** This app's version (`app.getVersion()`). */
  current: string;
  build: BuildInfo;
  /** `app.isPackaged`: an installed app, not `npm start`. */
  packaged: boolean;
  /** The operator's `autoUpdate` setting, read when needed (the console may change it). */
  autoUpdate: () => boolean;
  /** electron-updater's updater, made on first use: only an app that updates itself has one. */
  createUpdater: () => Updater;
  /** The view changed (the tray redraws, a notification may follow). */
  onChange: () => void;
  now?: () => number;
}

/**
 * Updates from the release feed: checks at start and every few hours (decisions/updates.ts says when),
 * downloads in the background, and installs on "Restart to update" or when the app quits.
 */
export class AppUpdates {
  private state: UpdateState = initialUpdateState();
  private updater: Updater | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly startedAt: number;
  private readonly now: () => number;
  /** The check being started is the operator's. */
  private asked = false;

  constructor(private readonly options: AppUpdatesOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  get mode(): UpdateMode {
    const { packaged, build, autoUpdate } = this.options;
    return updateMode({ packaged, signed: build.signed, autoUpdate: autoUpdate() });
  }

  view(): UpdateView {
    const { releasesUrl } = this.options.build;
    return {
      mode: this.mode,
      state: this.state,
      current: this.options.current,
      ...(releasesUrl ? { releasesUrl } : {}),
    };
  }

  /** Plans the next automatic check (the first one now); call again when the setting may have changed. */
  sync(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const at = nextCheckAt(this.state, this.mode, this.startedAt);
    if (at === undefined) return;
    this.timer = setTimeout(() => this.check(false), Math.max(0, at - this.now()));
    this.timer.unref();
  }

  /** Asks the release feed for a newer version; one found is downloaded in the background. */
  check(asked: boolean): void {
    if (this.mode !== 'automatic' && this.mode !== 'manual') return;
    this.asked = asked;
    // A failure of the check or of the download it starts arrives as the updater's `error` event too, which
    // is where it is handled; the promises would otherwise reject unhandled.
    const before = this.state;
    void this.updaterFor()
      .checkForUpdates()
      .then((result) => {
        // No result and not a word: electron-updater declined to check (it judged the app not installed);
        // the next check comes at its usual time rather than at every redraw.
        if (result === null && this.state === before) this.apply({ kind: 'not-available' });
        return result?.downloadPromise?.catch(() => undefined);
      })
      .catch(() => undefined);
  }

  /**
   * Starts the installer of the downloaded update, which quits the app and starts the new version. Call it
   * once the agent has stopped. False when the installer could not start (the app then stays as it is).
   */
  install(): boolean {
    const updater = this.updater;
    if (!updater || this.state.phase !== 'ready') return false;
    let failed = false;
    const onError = () => (failed = true);
    updater.on('error', onError);
    try {
      // Silent (no installer window on Windows), and run the new version afterwards.
      updater.quitAndInstall(true, true);
    } catch (error) {
      failed = true;
      this.apply({ kind: 'error', message: (error as Error).message });
    } finally {
      updater.removeListener('error', onError);
    }
    return !failed;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private updaterFor(): Updater {
    if (this.updater) return this.updater;
    const updater = this.options.createUpdater();
    updater.autoDownload = true;
    // A downloaded update the operator did not restart for installs when the app quits.
    updater.autoInstallOnAppQuit = true;
    updater.on('checking-for-update', () => this.apply({ kind: 'checking' }));
    updater.on('update-available', (info) => this.apply({ kind: 'available', version: info.version }));
    updater.on('download-progress', (progress) =>
      this.apply({ kind: 'progress', percent: progress.percent }),
    );
    updater.on('update-not-available', () => this.apply({ kind: 'not-available' }));
    updater.on('update-downloaded', (event) => this.apply({ kind: 'downloaded', version: event.version }));
    updater.on('error', (error) => this.apply({ kind: 'error', message: error?.message ?? String(error) }));
    this.updater = updater;
    return updater;
  }

  private apply(event: UpdaterEvent): void {
    const next = nextUpdateState(this.state, event, this.now(), this.asked);
    if (event.kind === 'checking') this.asked = false;
    // Progress comes many times a second: the tray redraws when the shown percent changes.
    if (isDeepStrictEqual(next, this.state)) return;
    this.state = next;
    this.sync();
    this.options.onChange();
  }
}
