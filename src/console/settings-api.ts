import { isDeepStrictEqual } from 'node:util';
import type { AgentBridgeApp } from '../app.js';
import type { SettingsResponse, SettingsUpdateResponse } from '../protocol/console-api.js';
import {
  SECRET_SETTINGS,
  isSettingName,
  validateSettings,
  type SettingName,
  type Settings,
} from '../settings/schema.js';
import { SettingsError, type SettingsStore } from '../settings/store.js';
import { ConsoleError, type FieldProblem } from './errors.js';

/** Settings read when the process starts listening: a change takes effect only at the next start. */
const RESTART_SETTINGS = ['port', 'host', 'consolePort'] as const satisfies SettingName[];

/**
 * GET and PUT /api/settings, through the same validated store as the CLI.
 *
 * PUT takes a JSON object of the settings to change. `null` clears a setting (back to its default, or "not
 * set"). Secrets are write-only: `gatewayToken: ""` means "unchanged" (the form's empty password field), a
 * string sets it; `bearerTokens` is replaced by the list sent. Nothing is saved when any field is invalid.
 */
export class ConsoleSettings {
  private readonly running: Pick<Settings, (typeof RESTART_SETTINGS)[number]>;
  private readonly pendingRestart = new Set<string>();

  constructor(
    private readonly app: AgentBridgeApp,
    private readonly store: SettingsStore,
    private readonly onChange: () => void,
  ) {
    const { port, host, consolePort } = app.currentSettings;
    this.running = { port, host, consolePort };
  }

  /** Settings changed here that wait for a restart, in the order of RESTART_SETTINGS. */
  get restartNeeded(): string[] {
    return RESTART_SETTINGS.filter((name) => this.pendingRestart.has(name));
  }

  view(): SettingsResponse {
    const settings = this.app.currentSettings;
    const shown = Object.entries(settings).filter(([name]) => !isSecret(name));
    return {
      settings: structuredClone(Object.fromEntries(shown)),
      secrets: {
        gatewayToken: { set: Boolean(settings.gatewayToken) },
        bearerTokens: { count: settings.bearerTokens.length },
      },
      restartNeeded: this.restartNeeded,
    };
  }

  update(body: unknown): SettingsUpdateResponse {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ConsoleError(
        400,
        'The body must be a JSON object of the settings to change.',
        'Send for example {"rpm": 120}.',
      );
    }
    const { values, cleared } = this.check(body as Record<string, unknown>);
    const saved = this.save(values, cleared);
    const change: Partial<Settings> = { ...values };
    for (const name of cleared) Object.assign(change, { [name]: saved[name] });

    const before = this.app.currentSettings;
    this.app.updateSettings(change);
    for (const name of RESTART_SETTINGS) {
      if (isDeepStrictEqual(this.app.currentSettings[name], this.running[name]))
        this.pendingRestart.delete(name);
      else this.pendingRestart.add(name);
    }
    const applied = (Object.keys(change) as SettingName[]).filter(
      (name) => !isRestartSetting(name) && !isDeepStrictEqual(before[name], change[name]),
    );
    this.onChange();
    return { ...this.view(), applied };
  }

  // Every problem at once, each naming its field and rule (never the value: it may be a secret).
  private check(body: Record<string, unknown>): { values: Partial<Settings>; cleared: SettingName[] } {
    const given: Record<string, unknown> = {};
    const cleared: SettingName[] = [];
    const problems: FieldProblem[] = [];
    for (const [name, value] of Object.entries(body)) {
      if (name === 'gatewayToken' && value === '') continue;
      if (value !== null) given[name] = value;
      else if (isSettingName(name)) cleared.push(name);
      else problems.push({ field: name, message: `${name}: is not a known setting` });
    }
    const result = validateSettings(given);
    if (!result.ok) problems.push(...result.errors);
    if (problems.length > 0 || !result.ok) {
      throw new ConsoleError(
        400,
        `Invalid settings; nothing was saved: ${problems.map((p) => p.message).join('; ')}.`,
        'Correct the fields listed and save again.',
        problems,
      );
    }
    return { values: result.value, cleared };
  }

  private save(values: Partial<Settings>, cleared: SettingName[]): Settings {
    try {
      this.store.update(values);
      return this.store.reset(...cleared);
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error;
      // Store errors say what to do and never quote the file's content.
      const fields = error.errors.length > 0 ? error.errors : undefined;
      throw new ConsoleError(fields ? 400 : 500, error.message, undefined, fields);
    }
  }
}

function isSecret(name: string): boolean {
  return (SECRET_SETTINGS as readonly string[]).includes(name);
}

function isRestartSetting(name: string): boolean {
  return (RESTART_SETTINGS as readonly string[]).includes(name);
}
