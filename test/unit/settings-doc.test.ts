// The settings tables of docs/settings.md are what an operator reads before any --help (issue 16: the
// README's table said the tunnel defaults to `none` while the code and --help say localtunnel). They are
// checked against the schema and the flags here, row by row, so they cannot drift again. One table per
// section of the console's Settings page; together they hold every setting once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagOf } from '../../src/settings/flags.js';
import { DEFAULT_SETTINGS, SETTING_NAMES, type SettingName } from '../../src/settings/schema.js';

const SETTINGS_DOC = readFileSync(join(import.meta.dirname, '../../docs/settings.md'), 'utf8');

interface Row {
  setting: string;
  flag: string;
  env: string;
  default: string;
}

/** The rows of every table whose first column is "setting", by setting name (the first column's `name`). */
function settingsTable(): Map<string, Row> {
  const tables = SETTINGS_DOC.split(/\n(?!\|)/)
    .map((block) => block.split('\n').filter((line) => line.startsWith('|')))
    .filter((lines) => /^\|\s*setting\s*\|/.test(lines[0] ?? ''));
  expect(tables.length, 'docs/settings.md has settings tables').toBeGreaterThan(0);
  const rows = new Map<string, Row>();
  for (const line of tables.flatMap((lines) => lines.slice(2))) {
    const [setting = '', flag = '', env = '', fallback = ''] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (rows.has(setting)) throw new Error(`docs/settings.md has ${setting} twice`);
    rows.set(setting, { setting, flag, env, default: fallback });
  }
  return rows;
}

/** `a`, `b` -> ['a', 'b'] */
function codes(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

/** What a default cell says, as the value it stands for (units as the docs write them). */
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

describe('the settings tables of docs/settings.md', () => {
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
