import { isDeepStrictEqual } from 'node:util';
import type { AgentBridgeApp } from '../app.js';
import { DEMO_HELD_SETTINGS } from '../demo/demo-mode.js';
import type { SettingSourceView, SettingsResponse, SettingsUpdateResponse } from '../protocol/console-api.js';
import { settingSources, type OverrideOrigin } from '../settings/sources.js';
import {
  CONSOLE_READ_ONLY_SETTINGS,
  DEFAULT_SETTINGS,
  SECRET_SETTINGS,
  isSettingName,
  validateSettings,
  type ConsoleReadOnlySetting,
  type SettingName,
  type Settings,
} from '../settings/schema.js';
import { SettingsError, type SettingsStore } from '../settings/store.js';
import { ConsoleError, type FieldProblem } from './errors.js';
import { maskedRedisUrl } from '../state/redis-connection.js';
import { withoutPassword } from './status.js';
import { PresetError, presetViews, renderPreset } from '../tunnel/presets.js';

/** Settings read when the process starts listening: a change takes effect only at the next start. */
const RESTART_SETTINGS = ['port', 'host', 'consolePort'] as const satisfies SettingName[];

/** Why each read-only setting is (CONSOLE_READ_ONLY_SETTINGS), and its flag. */
const READ_ONLY: Record<ConsoleReadOnlySetting, { why: string; flag: string }> = {
  tunnelCommand: { why: 'it runs a program on this machine', flag: '--tunnel-command' },
  tunnelUrlPattern: { why: 'it goes with the tunnel command', flag: '--tunnel-url-pattern' },
  metricsNoAuth: { why: 'it opens /metrics to every local user and process', flag: '--metrics-no-auth' },
  redisUrl: { why: 'every replica must use the same one, read at start', flag: '--redis-url' },
  keysFile: { why: "it is the agent's identity, read at start", flag: '--keys-file' },
};

/** What `withoutPassword` shows in place of the gateway URL's password. */
const MASKED_PASSWORD = '***';

const NEW_ADDRESS_NEEDS_TOKEN =
  "gatewayToken: the gateway's address changes: enter its token again, so your current token is never sent to a new address";

/**
 * GET and PUT /api/settings, through the same validated store as the CLI.
 *
 * PUT takes a JSON object of the settings to change. `null` clears a setting (back to its default, or "not
 * set"). Secrets are write-only: `gatewayToken: ""` means "unchanged" (the form's empty password field), a
 * string sets it; `bearerTokens` is replaced by the list sent. Nothing is saved when any field is invalid.
 *
 * What a console token may not do (issue 11): read the gateway URL's password (shown masked; the masked URL
 * sent back means "unchanged"), send the gateway token to an address it chose (a new origin needs the token
 * in the same PUT), or run a program (CONSOLE_READ_ONLY_SETTINGS: 403). Sending back what GET showed is
 * always harmless, so a script may PUT the whole view.
 */
export class ConsoleSettings {
  private readonly running: Pick<Settings, (typeof RESTART_SETTINGS)[number]>;
  private readonly pendingRestart = new Set<string>();
  /** Saved or cleared here since the start: settings.json has them now, whatever flag set them at start. */
  private readonly savedSince = new Set<string>();

  constructor(
    private readonly app: AgentBridgeApp,
    private readonly store: SettingsStore,
    private readonly onChange: () => void,
    /** The flags and environment variables that set settings for this run (`serve`; none in the desktop app). */
    private readonly overrides: Partial<Record<SettingName, OverrideOrigin>> = {},
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
    const shown: Record<string, unknown> = Object.fromEntries(
      Object.entries(settings).filter(([name]) => !isSecret(name)),
    );
    // The URL's password is a secret too (http://user:pass@host), masked as /api/status does.
    if (settings.gatewayUrl !== undefined) shown.gatewayUrl = withoutPassword(settings.gatewayUrl);
    if (settings.redisUrl !== undefined) shown.redisUrl = maskedRedisUrl(settings.redisUrl);
    return {
      settings: structuredClone(shown),
      sources: this.sources(),
      secrets: {
        // The token in use, wherever it comes from (OpenClaw's config too): never its value.
        gatewayToken: { set: Boolean(this.app.gateway.current.config.token) },
        bearerTokens: { count: settings.bearerTokens.length },
      },
      restartNeeded: this.restartNeeded,
      readOnly: [...CONSOLE_READ_ONLY_SETTINGS],
      tunnelPresets: presetViews(),
    };
  }

  /**
   * Where each value comes from; for the gateway's address, token and model when they are not set, what the
   * bridge uses instead and where it found it (the environment, OpenClaw's config, the default).
   */
  private sources(): Record<string, SettingSourceView> {
    const sources: Record<string, SettingSourceView> = settingSources({
      settings: this.app.currentSettings,
      stored: this.store.stored(),
      overrides: this.overrides,
      savedSince: this.savedSince,
    });
    const resolved = this.app.gateway.current.source;
    const openclaw = this.app.gateway.openclawConfig().path;
    const fallback = (from: 'env' | 'openclaw-config' | 'default' | 'none', env: string) =>
      from === 'env'
        ? ({ source: 'env', from: env } as const)
        : from === 'openclaw-config'
          ? ({ source: 'openclaw.json', from: openclaw } as const)
          : ({ source: 'default' } as const);
    if (this.app.currentSettings.gatewayUrl === undefined && resolved.url !== 'setting') {
      const value = withoutPassword(this.app.gateway.current.config.url);
      sources.gatewayUrl = { ...fallback(resolved.url, 'GATEWAY_URL or OPENCLAW_GATEWAY_URL'), value };
    }
    if (this.app.currentSettings.gatewayToken === undefined && resolved.token !== 'setting') {
      sources.gatewayToken = fallback(resolved.token, 'GATEWAY_TOKEN or OPENCLAW_GATEWAY_TOKEN');
    }
    if (this.app.currentSettings.gatewayModel === undefined) {
      sources.gatewayModel = { ...sources.gatewayModel!, value: this.app.gateway.current.config.model };
    }
    return sources;
  }

  update(body: unknown): SettingsUpdateResponse {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new ConsoleError(
        400,
        'The body must be a JSON object of the settings to change.',
        'Send for example {"rpm": 120}.',
      );
    }
    const { request, problems } = this.withoutEchoes(body as Record<string, unknown>);
    this.refuseReadOnly(request);
    this.refuseDemoHeld(request);
    if (Object.hasOwn(request, 'skills')) problems.push(SKILLS_HERE);
    return this.apply(request, problems);
  }

  /**
   * The `skills` setting as the Skills routes changed it (skills-routes.ts): they check each skill against
   * its agent's tools, which a PUT of the settings would not.
   */
  saveSkills(skills: Settings['skills']): SettingsUpdateResponse {
    return this.apply({ skills });
  }

  /**
   * POST /api/tunnel/preset: the command tunnel set to a stable-address preset (src/tunnel/presets.ts). The
   * command line is the preset's; the operator's values only fill its fields, each matching its pattern in
   * full, so the console still never runs a command line of its own choosing.
   */
  usePreset(body: unknown): SettingsUpdateResponse {
    const { id, values } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof id !== 'string' || (values !== undefined && (typeof values !== 'object' || values === null))) {
      throw new ConsoleError(
        400,
        'The body must be {"id": "<preset>", "values": {...}}.',
        'Send for example {"id": "ngrok-domain", "values": {"domain": "your-name.ngrok.app"}}.',
      );
    }
    let preset;
    try {
      preset = renderPreset(id, (values ?? {}) as Record<string, unknown>);
    } catch (error) {
      if (!(error instanceof PresetError)) throw error;
      throw new ConsoleError(
        400,
        `${error.message} Nothing was saved.`,
        'Correct the fields listed.',
        error.problems,
      );
    }
    return this.apply({
      tunnel: 'command',
      tunnelCommand: preset.command,
      tunnelUrlPattern: preset.urlPattern,
    });
  }

  /** Validates, saves and applies `request` (every problem at once; nothing saved when there is one). */
  private apply(request: Record<string, unknown>, problems: FieldProblem[] = []): SettingsUpdateResponse {
    const { values, cleared } = this.check(request, problems);
    const saved = this.save(values, cleared);
    for (const name of [...Object.keys(values), ...cleared]) this.savedSince.add(name);
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
  private check(
    body: Record<string, unknown>,
    problems: FieldProblem[] = [],
  ): { values: Partial<Settings>; cleared: SettingName[] } {
    const given: Record<string, unknown> = {};
    const cleared: SettingName[] = [];
    for (const [name, value] of Object.entries(body)) {
      if (name === 'gatewayToken' && value === '') continue;
      if (value !== null) given[name] = value;
      else if (isSettingName(name)) cleared.push(name);
      else problems.push({ field: name, message: `${name}: is not a known setting` });
    }
    const result = validateSettings(given);
    if (!result.ok) problems.push(...result.errors);
    problems.push(...this.consoleRules(body));
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

  /**
   * The request without what only repeats the view: read-only settings sent with their current value, and
   * the masked gateway URL. A masked password with another path of the same origin and user stands for the
   * real one; with another origin or user it is a problem, as the real password would go elsewhere.
   */
  private withoutEchoes(body: Record<string, unknown>): {
    request: Record<string, unknown>;
    problems: FieldProblem[];
  } {
    const request = { ...body };
    const current = this.app.currentSettings;
    for (const name of [...CONSOLE_READ_ONLY_SETTINGS, 'skills'] as const) {
      if (Object.hasOwn(request, name) && unchanged(request[name], current[name], name)) delete request[name];
    }
    const url = request.gatewayUrl;
    const sent = typeof url === 'string' ? parseUrl(url) : undefined;
    if (!sent || sent.password !== MASKED_PASSWORD) return { request, problems: [] };
    const real = current.gatewayUrl === undefined ? undefined : parseUrl(current.gatewayUrl);
    if (url === withoutPassword(current.gatewayUrl ?? '')) {
      delete request.gatewayUrl;
    } else if (real?.password && sameOriginAndUser(sent, real)) {
      sent.password = real.password;
      request.gatewayUrl = sent.toString();
    } else {
      const message =
        'gatewayUrl: holds the hidden password (***) but names another address or user: type the password again';
      return { request, problems: [{ field: 'gatewayUrl', message }] };
    }
    return { request, problems: [] };
  }

  /** 403 for a change to a setting only the machine's operator may make (CONSOLE_READ_ONLY_SETTINGS). */
  private refuseReadOnly(request: Record<string, unknown>): void {
    const names = CONSOLE_READ_ONLY_SETTINGS.filter((name) => Object.hasOwn(request, name));
    if (names.length === 0) return;
    throw new ConsoleError(
      403,
      `The console cannot change ${names.join(' or ')}; nothing was saved.`,
      'Set it on the machine that runs the bridge: with its flag, or in settings.json in the data dir.',
      names.map((name) => ({
        field: name,
        message: `${name}: cannot be changed from the console (${READ_ONLY[name].why}): set it with ${READ_ONLY[name].flag} or in settings.json on the machine`,
      })),
    );
  }

  /**
   * A demo keeps its stand-in gateway and its card's "demo" for as long as it runs (src/demo/demo-mode.ts);
   * sending back what GET showed (the token's "" is "unchanged") stays harmless.
   */
  private refuseDemoHeld(request: Record<string, unknown>): void {
    if (!this.app.demo) return;
    const current = this.app.currentSettings;
    const names = DEMO_HELD_SETTINGS.filter(
      (name) =>
        Object.hasOwn(request, name) &&
        !unchanged(request[name], current[name], name) &&
        !(name === 'gatewayToken' && request[name] === ''),
    );
    if (names.length === 0) return;
    throw new ConsoleError(
      403,
      `This is a demo run: it keeps ${names.join(' and ')} as --demo set ${names.length === 1 ? 'it' : 'them'} while it runs; nothing was saved.`,
      'Stop the demo and start Agent Bridge without --demo to use your own gateway and description.',
      names.map((name) => ({ field: name, message: `${name}: set by --demo for this run` })),
    );
  }

  /** The rules that hold only for the console (the CLI and settings file are the operator's own). */
  private consoleRules(request: Record<string, unknown>): FieldProblem[] {
    const problems: FieldProblem[] = [];
    const current = this.app.currentSettings;
    // Both cleared: the address and the token come back from the same place (the environment or OpenClaw's
    // config), as before anything was set here.
    const bothFallBack = request.gatewayUrl === null && request.gatewayToken === null;
    if (this.gatewayAddressChanges(request) && !isNonEmptyString(request.gatewayToken) && !bothFallBack) {
      problems.push({ field: 'gatewayToken', message: NEW_ADDRESS_NEEDS_TOKEN });
    }
    // Clearing the token falls back to the environment's or OpenClaw's own token: only together with an
    // address from the same place, never to an address set in the console (which would then receive it).
    const urlAfter = Object.hasOwn(request, 'gatewayUrl') ? request.gatewayUrl : current.gatewayUrl;
    if (request.gatewayToken === null && urlAfter !== null && urlAfter !== undefined) {
      problems.push({ field: 'gatewayToken', message: FALLBACK_TOKEN_NEEDS_FALLBACK_URL });
    }
    const command = Object.hasOwn(request, 'tunnelCommand') ? request.tunnelCommand : current.tunnelCommand;
    if (request.tunnel === 'command' && current.tunnel !== 'command' && !isNonEmptyString(command)) {
      problems.push({
        field: 'tunnel',
        message:
          'tunnel: "command" runs the tunnel command set on this machine, and none is set: choose a stable-address preset, or set it with --tunnel-command or in settings.json on the machine',
      });
    }
    return problems;
  }

  /**
   * Whether the gateway token in use would go to another origin (scheme, host, port): the write-only token
   * must not be sent where a console user points it (threat: a leaked console token exfiltrating the
   * gateway token). Clearing the URL counts as a change: the fallback (env, the OpenClaw config file, which
   * may change, or the default address) is not an address the operator confirmed for this token. With no
   * token in use there is nothing to send.
   */
  private gatewayAddressChanges(request: Record<string, unknown>): boolean {
    if (!Object.hasOwn(request, 'gatewayUrl') || !this.app.gateway.current.config.token) return false;
    const url = request.gatewayUrl;
    if (url === null) return this.app.currentSettings.gatewayUrl !== undefined;
    const next = typeof url === 'string' ? parseUrl(url) : undefined;
    if (!next) return false; // not a URL: validation reports it
    return next.origin !== parseUrl(this.app.gateway.current.config.url)?.origin;
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

const SKILLS_HERE: FieldProblem = {
  field: 'skills',
  message:
    "skills: change skills on the Skills page (POST, PUT and DELETE /api/skills), which checks each one against its agent's tools",
};

const FALLBACK_TOKEN_NEEDS_FALLBACK_URL =
  'gatewayToken: clearing it uses the token from the environment or the OpenClaw config, which is only sent ' +
  'to the address from the same place: clear the gateway URL too, or type the token for this address';

function isSecret(name: string): boolean {
  return (SECRET_SETTINGS as readonly string[]).includes(name);
}

/** `null` asks for the default (or "not set"); anything else is compared with the current value. */
function unchanged(value: unknown, current: unknown, name: SettingName): boolean {
  const next = value === null ? (DEFAULT_SETTINGS as Partial<Settings>)[name] : value;
  return isDeepStrictEqual(next, current);
}

function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function sameOriginAndUser(a: URL, b: URL): boolean {
  return a.origin === b.origin && a.username === b.username;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isRestartSetting(name: string): boolean {
  return (RESTART_SETTINGS as readonly string[]).includes(name);
}
