// The README's settings table is what an operator reads before any --help (issue 16: it said the tunnel
// defaults to `none` while the code and --help say localtunnel). It is checked against the schema and the
// flags here, row by row, so it cannot drift again.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagOf } from '../../src/settings/flags.js';
import { DEFAULT_SETTINGS, SETTING_NAMES, type SettingName } from '../../src/settings/schema.js';

const README = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

interface Row {
  setting: string;
  flag: string;
  env: string;
  default: string;
}

/** The rows of the table under "## Settings", by setting name (the first column's `name`). */
function settingsTable(): Map<string, Row> {
  const start = README.indexOf('\n## Settings\n');
  const section = README.slice(start, README.indexOf('\n## ', start + 1));
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const rows = new Map<string, Row>();
  for (const line of lines.slice(2)) {
    const [setting = '', flag = '', env = '', fallback = ''] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (rows.has(setting)) throw new Error(`the README's settings table has ${setting} twice`);
    rows.set(setting, { setting, flag, env, default: fallback });
  }
  return rows;
}

/** `a`, `b` -> ['a', 'b'] */
function codes(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

/** What a default cell says, as the value it stands for (units as the README writes them). */
function readDefault(name: SettingName, cell: string): unknown {
  const fallback = (DEFAULT_SETTINGS as Record<string, unknown>)[name];
  if (cell === 'none') return Array.isArray(fallback) ? [] : typeof fallback === 'object' ? {} : undefined;
  if (cell === 'on' || cell === 'off') return cell === 'on';
  // A long built-in text is named, not quoted.
  if (cell === 'a built-in text')
    return typeof fallback === 'string' && fallback.length > 80 ? fallback : cell;
  const number = /^(\d[\d,]*(?:\.\d+)?)(?: (s|KiB))?$/.exec(cell);
  if (number) {
    const value = Number(number[1]!.replaceAll(',', ''));
    if (number[2] === 'KiB') return value * 1024;
    // Timeouts are shown in seconds, whatever unit the setting's name keeps.
    if (number[2] === 's') return name.endsWith('Ms') ? value * 1000 : value;
    return value;
  }
  const [code] = codes(cell);
  if (code !== undefined && cell === `\`${code}\``) return code;
  return cell;
}

describe("the README's settings table", () => {
  const rows = settingsTable();

  it('has one row for every setting, and no row for a setting that does not exist', () => {
    const named = [...rows.keys()].flatMap(codes);
    expect(named.filter((name) => !(SETTING_NAMES as string[]).includes(name))).toEqual([]);
    expect(SETTING_NAMES.filter((name) => !named.includes(name))).toEqual([]);
  });

  it.each(SETTING_NAMES)('%s: its default is the schema default', (name) => {
    const row = rows.get(`\`${name}\``)!;
    const fallback = (DEFAULT_SETTINGS as Record<string, unknown>)[name];
    if (fallback === undefined) {
      // Optional: no default value, the row says what applies instead (none, or where it is read from).
      expect(row.default).not.toBe('');
      return;
    }
    expect(readDefault(name, row.default)).toEqual(fallback);
  });

  it.each(SETTING_NAMES)('%s: its flag and environment variables are those the CLI reads', (name) => {
    const row = rows.get(`\`${name}\``)!;
    const flag = flagOf(name);
    expect(codes(row.flag)[0]?.split(' ')[0]).toBe(flag?.flag);
    for (const env of flag?.env ?? []) expect(codes(row.env)).toContain(env);
  });
});
