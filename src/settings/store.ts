import { join } from 'node:path';
import Conf, { type Options } from 'conf';
import {
  CorruptFileError,
  ensureDir,
  errorCode,
  readJsonFile,
  restrictFileMode,
} from '../lib/atomic-file.js';
import { normalizeSettingIds } from './agent-ids.js';
import {
  DEFAULT_SETTINGS,
  isSettingName,
  settingsSchema,
  validateSettings,
  type SettingName,
  type Settings,
  type SettingsFieldError,
} from './schema.js';

/** Invalid settings or an unreadable settings file; `errors` lists each field and its rule. */
export class SettingsError extends Error {
  constructor(
    message: string,
    readonly errors: SettingsFieldError[] = [],
  ) {
    super(message);
    this.name = 'SettingsError';
  }
}

export interface SettingsStore {
  /** The underlying store (an electron-store in the desktop shell). */
  readonly conf: Conf<Settings>;
  /** The settings file. */
  readonly path: string;
  /** Every setting, defaults filled in. */
  get(): Settings;
  /** The names of the settings the file holds (what the operator set, not defaults). */
  stored(): Set<SettingName>;
  /** Validates and saves some settings; throws SettingsError naming every bad field. */
  update(partial: Partial<Settings>): Settings;
  /** Forgets stored values, so the defaults (or "not set") apply again. */
  reset(...names: SettingName[]): Settings;
}

/**
 * Options for `conf` or electron-store, so the desktop shell builds a store on the same file:
 * `new ElectronStore<Settings>(settingsConfOptions(dir))`.
 */
export function settingsConfOptions(dataDir: string): Options<Settings> {
  return {
    cwd: dataDir,
    configName: 'settings',
    schema: settingsSchema,
    // The file holds secrets (gatewayToken, bearerTokens).
    configFileMode: 0o600,
    // Only what the operator set is stored, so a later release's better defaults still apply.
    ajvOptions: { useDefaults: false },
    accessPropertiesByDotNotation: false,
    clearInvalidConfig: false,
    watch: false,
  };
}

export function openSettingsStore(dataDir: string, conf?: Conf<Settings>): SettingsStore {
  ensureDir(dataDir);
  const store =
    conf ?? guard(join(dataDir, 'settings.json'), () => new Conf<Settings>(settingsConfOptions(dataDir)));
  const path = store.path;
  // The file holds secrets; an electron-store built without `configFileMode` would leave it 0644.
  restrictFileMode(path, 0o600);

  const known = () => {
    const stored = guard(path, () => store.store) as Record<string, unknown>;
    return Object.entries(stored).filter(([name, value]) => isSettingName(name) && value !== undefined);
  };
  const get = (): Settings => {
    // A hand-edited file may spell an id otherwise than senders arrive with: read it in its one spelling.
    const { value, errors } = normalizeSettingIds({
      ...structuredClone(DEFAULT_SETTINGS),
      ...structuredClone(Object.fromEntries(known())),
    } as Settings);
    if (errors.length > 0) {
      const list = errors.map((e) => e.message).join('; ');
      throw new SettingsError(`Settings file ${path} is invalid: ${list}. Fix it, and start again.`, errors);
    }
    return value;
  };

  return {
    conf: store,
    path,
    get,
    stored: () => new Set(known().map(([name]) => name as SettingName)),
    update(partial) {
      const result = validateSettings(partial);
      if (!result.ok) {
        throw new SettingsError(
          `Invalid settings: ${result.errors.map((e) => e.message).join('; ')}`,
          result.errors,
        );
      }
      if (Object.keys(result.value).length > 0) guard(path, () => store.set(result.value));
      restrictFileMode(path, 0o600);
      return get();
    },
    reset(...names) {
      const unknown = names.filter((name) => !isSettingName(name));
      if (unknown.length > 0) {
        const errors = unknown.map((field) => ({ field, message: `${field}: is not a known setting` }));
        throw new SettingsError(`Invalid settings: ${errors.map((e) => e.message).join('; ')}`, errors);
      }
      guard(path, () => names.forEach((name) => store.delete(name)));
      restrictFileMode(path, 0o600);
      return get();
    },
  };
}

// conf's own errors quote the file's text (which may hold a secret): replace them with one that says what to do.
function guard<T>(path: string, action: () => T): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof SettingsError) throw error;
    throw explain(path, error);
  }
}

function explain(path: string, error: unknown): SettingsError {
  const fix = 'fix it, or delete it to go back to the default settings';
  let raw: unknown;
  try {
    raw = readJsonFile<unknown>(path);
  } catch (readError) {
    if (readError instanceof CorruptFileError) {
      return new SettingsError(`Settings file ${path} ${readError.detail}; ${fix}`);
    }
    return new SettingsError(
      `Cannot read settings file ${path} (${errorCode(readError) ?? 'unknown error'})`,
    );
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const known = Object.fromEntries(Object.entries(raw).filter(([name]) => isSettingName(name)));
    const result = validateSettings(known);
    if (!result.ok) {
      const list = result.errors.map((e) => e.message).join('; ');
      return new SettingsError(
        `Settings file ${path} is invalid: ${list}. ${capitalize(fix)}.`,
        result.errors,
      );
    }
  } else if (raw !== undefined) {
    return new SettingsError(`Settings file ${path} is not a JSON object; ${fix}`);
  }
  const code = errorCode(error);
  return new SettingsError(
    `Cannot use settings file ${path}${code ? ` (${code})` : ''}; check its permissions`,
  );
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
