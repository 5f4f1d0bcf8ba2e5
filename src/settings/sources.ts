import { isDeepStrictEqual } from 'node:util';
import type { SettingSourceView } from '../protocol/console-api.js';
import { DEFAULT_SETTINGS, SETTING_NAMES, type SettingName, type Settings } from './schema.js';

/** A setting given for one run: by a flag, or by an environment variable (its name either way). */
export interface OverrideOrigin {
  source: 'flag' | 'env';
  name: string;
}

export interface SourceLayers {
  /** The settings in use. */
  settings: Settings;
  /** The names settings.json holds. */
  stored: ReadonlySet<string>;
  /** What flags and the environment set for this run (parseServeArgs's `origins`). */
  overrides: Partial<Record<SettingName, OverrideOrigin>>;
  /** Saved (or cleared) through the console since the start: settings.json has it now, whatever a flag said. */
  savedSince: ReadonlySet<string>;
}

/**
 * Where each setting's value comes from, for every setting the schema has (a new one needs nothing here): a
 * flag or variable of this run, else settings.json, else the default. A value none of these explain (an
 * embedder passed it, as tests do) counts as saved.
 */
export function settingSources(layers: SourceLayers): Record<SettingName, SettingSourceView> {
  const { settings, stored, overrides, savedSince } = layers;
  const defaults = DEFAULT_SETTINGS as Partial<Settings>;
  const views = {} as Record<SettingName, SettingSourceView>;
  for (const name of SETTING_NAMES) {
    const override = overrides[name];
    if (override && !savedSince.has(name)) {
      views[name] = { source: override.source, from: override.name };
      continue;
    }
    const saved = stored.has(name) || !isDeepStrictEqual(settings[name], defaults[name]);
    views[name] = {
      source: saved ? 'settings' : 'default',
      ...(override ? { overridesAtStart: override.name } : {}),
    };
  }
  return views;
}
