// An operator's OpenClaw config file as tests change it: a snippet the console proposes merged in as the
// operator does (objects key by key, anything else replaced), the file written whole as OpenClaw would
// find it after an edit.
import { readFileSync, writeFileSync } from 'node:fs';
import JSON5 from 'json5';

export type OpenClawConfig = Record<string, unknown>;

/** Merges `from` into `into`: objects key by key, anything else replaced. */
export function mergeConfig(into: unknown, from: unknown): unknown {
  const isObject = (v: unknown): v is OpenClawConfig =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(into) || !isObject(from)) return from;
  const out: OpenClawConfig = { ...into };
  for (const [key, value] of Object.entries(from))
    out[key] = key in into ? mergeConfig(into[key], value) : value;
  return out;
}

export function readConfigFile(path: string): OpenClawConfig {
  return JSON5.parse<OpenClawConfig>(readFileSync(path, 'utf8'));
}

export function writeConfigFile(path: string, config: unknown): void {
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
}

/** The snippet (JSON5, comments and all) merged into the file at `path`; the merged config. */
export function mergeSnippetInto(path: string, snippet: string): OpenClawConfig {
  const merged = mergeConfig(readConfigFile(path), JSON5.parse(snippet)) as OpenClawConfig;
  writeConfigFile(path, merged);
  return merged;
}
