// Where the gateway is and how to log in: explicit settings, then the environment, then the local
// OpenClaw config file (GATEWAY.md "Where it is"), then the default loopback address.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import JSON5 from 'json5';
import type { GatewayConfig } from './gateway-client.js';

export type GatewayStatus = 'configured' | 'missing GATEWAY_URL' | 'missing GATEWAY_TOKEN';

/** From flags and the settings store, already merged by the caller; undefined = not set. */
export interface GatewaySettingsInput {
  url?: string;
  token?: string;
  model?: string;
  timeoutMs?: number;
}

export interface ResolvedGateway {
  config: GatewayConfig;
  status: GatewayStatus;
  source: {
    url: 'setting' | 'env' | 'openclaw-config' | 'default';
    token: 'setting' | 'env' | 'openclaw-config' | 'none';
  };
}

export const DEFAULT_GATEWAY_URL = 'http://127.0.0.1:18789';
export const DEFAULT_GATEWAY_MODEL = 'openclaw';
export const DEFAULT_GATEWAY_TIMEOUT_MS = 120_000;

interface OpenClawFile {
  url?: string;
  token?: string;
  mode?: string;
}

export function resolveGatewayConfig(
  input: GatewaySettingsInput,
  env: NodeJS.ProcessEnv = process.env,
  configPath?: string,
): ResolvedGateway {
  const file = readOpenClawConfig(configPath ?? openclawConfigPath(env), env);
  const url = resolveUrl(input, env, file);
  const token = resolveToken(input, env, file);
  const config: GatewayConfig = {
    url: url.value,
    token: token.value,
    model: input.model?.trim() || DEFAULT_GATEWAY_MODEL,
    timeoutMs: isPositiveInteger(input.timeoutMs) ? input.timeoutMs : DEFAULT_GATEWAY_TIMEOUT_MS,
  };
  const status: GatewayStatus = !isHttpUrl(config.url)
    ? 'missing GATEWAY_URL'
    : !config.token
      ? 'missing GATEWAY_TOKEN'
      : 'configured';
  return { config, status, source: { url: url.source, token: token.source } };
}

function resolveUrl(input: GatewaySettingsInput, env: NodeJS.ProcessEnv, file: OpenClawFile) {
  // An explicit empty setting is the operator clearing the URL: report it rather than fall back.
  if (input.url !== undefined) return { value: input.url.trim(), source: 'setting' as const };
  const fromEnv = nonEmpty(env.GATEWAY_URL) ?? nonEmpty(env.OPENCLAW_GATEWAY_URL);
  if (fromEnv) return { value: fromEnv, source: 'env' as const };
  if (file.url) return { value: file.url, source: 'openclaw-config' as const };
  return { value: DEFAULT_GATEWAY_URL, source: 'default' as const };
}

function resolveToken(input: GatewaySettingsInput, env: NodeJS.ProcessEnv, file: OpenClawFile) {
  const fromInput = nonEmpty(input.token);
  if (fromInput) return { value: fromInput, source: 'setting' as const };
  // OpenClaw's own overrides: in password mode the gateway checks the password, so it comes first.
  const aliases =
    file.mode === 'password'
      ? [env.OPENCLAW_GATEWAY_PASSWORD, env.OPENCLAW_GATEWAY_TOKEN]
      : [env.OPENCLAW_GATEWAY_TOKEN, env.OPENCLAW_GATEWAY_PASSWORD];
  const fromEnv = [env.GATEWAY_TOKEN, ...aliases].map(nonEmpty).find(Boolean);
  if (fromEnv) return { value: fromEnv, source: 'env' as const };
  if (file.token) return { value: file.token, source: 'openclaw-config' as const };
  return { value: '', source: 'none' as const };
}

/** Where OpenClaw keeps its config: `OPENCLAW_CONFIG_PATH`, else `~/.openclaw/openclaw.json`. */
export function openclawConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const override = nonEmpty(env.OPENCLAW_CONFIG_PATH);
  if (!override) return join(homedir(), '.openclaw', 'openclaw.json');
  return override.startsWith('~/') ? join(homedir(), override.slice(2)) : override;
}

/** The gateway's address and credential from OpenClaw's config; a missing or broken file is just no source. */
export function readOpenClawConfig(path: string, env: NodeJS.ProcessEnv = process.env): OpenClawFile {
  let gateway: Record<string, unknown>;
  try {
    const parsed = JSON5.parse<unknown>(readFileSync(path, 'utf8'));
    gateway = record(record(parsed).gateway);
  } catch {
    return {};
  }
  const auth = record(gateway.auth);
  const mode = typeof auth.mode === 'string' ? auth.mode : undefined;
  // Mode says which secret the gateway checks; without a mode, whichever one is set.
  const secret =
    mode === 'token'
      ? auth.token
      : mode === 'password'
        ? auth.password
        : mode === undefined
          ? (auth.token ?? auth.password)
          : undefined;
  const token = typeof secret === 'string' ? substitute(secret, env) : undefined;
  const port = gateway.port;
  return {
    ...(isPositiveInteger(port) && port <= 65_535 ? { url: `http://127.0.0.1:${port}` } : {}),
    ...(token ? { token } : {}),
    ...(mode ? { mode } : {}),
  };
}

// OpenClaw substitutes ${UPPER_CASE} env names in config strings ($${X} is a literal); an unset one
// leaves the value unusable (https://docs.openclaw.ai/gateway/configuration/environment-variables).
function substitute(value: string, env: NodeJS.ProcessEnv): string | undefined {
  let missing = false;
  const result = value.replace(/\$?\$\{([A-Z_][A-Z0-9_]*)\}/g, (match, name: string) => {
    if (match.startsWith('$$')) return match.slice(1);
    const found = env[name];
    if (!found) missing = true;
    return found ?? '';
  });
  return missing ? undefined : nonEmpty(result);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
