import type { MenuItemConstructorOptions } from 'electron';

/**
 * Whether this app updates itself. Only a signed build does: an update to an unsigned build could not be
 * verified (macOS and Windows check that an update is signed by the same publisher as the app; nothing
 * would check an unsigned one). A build from source updates with its repository; the operator may turn
 * the automatic checks off (`autoUpdate`), and then checks when asked.
 */
export type UpdateMode = 'automatic' | 'manual' | 'unsigned' | 'source';

export function updateMode(facts: { packaged: boolean; signed: boolean; autoUpdate: boolean }): UpdateMode {
  if (!facts.packaged) return 'source';
  if (!facts.signed) return 'unsigned';
  return facts.autoUpdate ? 'automatic' : 'manual';
}

/**
 * Where the updater is. A check or a download that failed is retried later (`failures` counts the failures
 * in a row, through the retries' checks and downloads); a manual check says how it went.
 */
export type UpdateState =
  | { phase: 'idle'; lastCheckAt?: number }
  | { phase: 'checking'; manual: boolean; failures: number }
  | { phase: 'downloading'; version: string; percent: number; failures: number }
  | { phase: 'ready'; version: string }
  | { phase: 'failed'; message: string; at: number; failures: number; manual: boolean };

/** What electron-updater reports, reduced to what the shell acts on. */
export type UpdaterEvent =
  | { kind: 'checking' }
  | { kind: 'available'; version: string }
  | { kind: 'not-available' }
  | { kind: 'progress'; percent: number }
  | { kind: 'downloaded'; version: string }
  | { kind: 'error'; message: string };

/** How often an automatic check runs: a release reaches every running app within a few hours. */
export const CHECK_EVERY_MS = 4 * 60 * 60_000;
/** A failed check or download is tried again after 15 minutes, then 30, 60..., at most CHECK_EVERY_MS. */
export const RETRY_FIRST_MS = 15 * 60_000;
/** "Restart to update" gives the updater this long to quit the app; then the app restarts as it is. */
export const INSTALL_GIVE_UP_MS = 2 * 60_000;

export function initialUpdateState(): UpdateState {
  return { phase: 'idle' };
}

/**
 * The next state. `manual` says a check was the operator's (from the tray), so its outcome is reported; an
 * error while an update was ready means the downloaded update cannot be installed, and the next check
 * downloads it again.
 */
export function nextUpdateState(
  state: UpdateState,
  event: UpdaterEvent,
  now: number,
  manual = false,
): UpdateState {
  const failures = 'failures' in state ? state.failures : 0;
  switch (event.kind) {
    case 'checking':
      // electron-updater also reports a check it runs by itself (before an install); keep a manual flag.
      return { phase: 'checking', manual: manual || (state.phase === 'checking' && state.manual), failures };
    case 'available':
      return { phase: 'downloading', version: event.version, percent: 0, failures };
    case 'progress':
      return state.phase === 'downloading'
        ? { ...state, percent: Math.max(0, Math.min(100, Math.round(event.percent))) }
        : state;
    case 'not-available':
      return { phase: 'idle', lastCheckAt: now };
    case 'downloaded':
      return { phase: 'ready', version: event.version };
    case 'error':
      return {
        phase: 'failed',
        message: firstLine(event.message),
        at: now,
        failures: failures + 1,
        manual: state.phase === 'checking' && state.manual,
      };
  }
}

/**
 * When the next automatic check runs (undefined: none is due). The first runs at start; then every
 * CHECK_EVERY_MS; after a failure sooner, doubling the wait each time. Nothing is checked while a check or
 * download runs, or once an update waits for its restart.
 */
export function nextCheckAt(state: UpdateState, mode: UpdateMode, startedAt: number): number | undefined {
  if (mode !== 'automatic') return undefined;
  switch (state.phase) {
    case 'idle':
      return state.lastCheckAt === undefined ? startedAt : state.lastCheckAt + CHECK_EVERY_MS;
    case 'failed':
      return state.at + Math.min(CHECK_EVERY_MS, RETRY_FIRST_MS * 2 ** (state.failures - 1));
    default:
      return undefined;
  }
}

/** What the tray shows about updates; `current` is this app's version. */
export interface UpdateView {
  mode: UpdateMode;
  state: UpdateState;
  current: string;
  /** The releases page, for builds that do not update themselves. */
  releasesUrl?: string;
}

export interface UpdateActions {
  checkForUpdates(): void;
  restartToUpdate(): void;
  setAutoUpdate(enabled: boolean): void;
  openReleases(url: string): void;
}

/** The tray's update items: the automatic-updates switch and one item that says where the update is. */
export function updateMenuItems(view: UpdateView, actions: UpdateActions): MenuItemConstructorOptions[] {
  const { mode, state, releasesUrl } = view;
  if (mode === 'source') return [];
  if (mode === 'unsigned') {
    if (!releasesUrl) return [];
    return [
      {
        id: 'update',
        label: 'Download new versions from the releases page…',
        click: () => actions.openReleases(`${releasesUrl.replace(/\/+$/, '')}/latest`),
      },
    ];
  }
  const toggle: MenuItemConstructorOptions = {
    id: 'auto-update',
    label: 'Update automatically',
    type: 'checkbox',
    checked: mode === 'automatic',
    click: (item) => actions.setAutoUpdate(item.checked),
  };
  return [toggle, updateItem(state, actions)];
}

function updateItem(state: UpdateState, actions: UpdateActions): MenuItemConstructorOptions {
  switch (state.phase) {
    case 'ready':
      return {
        id: 'update',
        label: `Restart to update (${state.version})`,
        click: () => actions.restartToUpdate(),
      };
    case 'downloading':
      return {
        id: 'update',
        label: `Downloading update ${state.version}… ${state.percent}%`,
        enabled: false,
      };
    case 'checking':
      return { id: 'update', label: 'Checking for updates…', enabled: false };
    case 'failed':
      return {
        id: 'update',
        label: `Check for updates (the last try failed: ${shorten(state.message, 40)})`,
        click: () => actions.checkForUpdates(),
      };
    case 'idle':
      return { id: 'update', label: 'Check for updates', click: () => actions.checkForUpdates() };
  }
}

export interface UpdateNotice {
  kind: 'update-ready' | 'update-checked';
  title: string;
  body: string;
}

/**
 * What the operator hears: an update ready to install, always; the outcome of a check they asked for.
 * An automatic check that fails is not announced (a laptop offline would hear it every retry): the tray
 * says it, and the next try comes by itself.
 */
export function updateNotice(before: UpdateView, after: UpdateView): UpdateNotice | undefined {
  const { state } = after;
  if (state.phase === 'ready' && (before.state.phase !== 'ready' || before.state.version !== state.version)) {
    return {
      kind: 'update-ready',
      title: `Agent Bridge ${state.version} is ready`,
      body: 'Choose "Restart to update" in the tray menu to install it now; otherwise it installs when you quit.',
    };
  }
  const askedBefore = before.state.phase === 'checking' && before.state.manual;
  if (!askedBefore) return undefined;
  if (state.phase === 'idle')
    return {
      kind: 'update-checked',
      title: 'Agent Bridge is up to date',
      body: `Version ${after.current} is the newest.`,
    };
  if (state.phase === 'failed')
    return {
      kind: 'update-checked',
      title: 'Could not check for updates',
      body: `${state.message}${after.mode === 'automatic' ? ' Agent Bridge tries again later.' : ''}`,
    };
  return undefined;
}

// Updater errors carry stacks and whole HTTP replies: the first line says what happened.
function firstLine(message: string): string {
  const line = message.split('\n', 1)[0]!.trim();
  return shorten(line || 'Unknown error', 200);
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
