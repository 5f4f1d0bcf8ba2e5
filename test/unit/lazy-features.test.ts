// Issue 16, item 6: the code of a feature that is off is not loaded. Redis (`--redis-url`), the MCP server
// (its SDK and schemas), the metrics registry and the localtunnel client load when they switch on, so the
// bundles `npm run serve` and the desktop app run must not import them at start: esbuild hoists a static
// import of a package to the top of a bundle, wherever in the code it sits. Each build script is run as
// written (into a scratch folder), and the packages its entry loads at start are followed chunk by chunk.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agents.js';

const ROOT = join(import.meta.dirname, '../..');
const OPTIONAL = ['ioredis', 'prom-client', '@modelcontextprotocol/sdk', 'zod', 'localtunnel'];
const scratch = tempDir('lazy-features-');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The script's esbuild command, its output sent to `outdir`. */
function build(script: string, outdir: string): string {
  const scripts = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const command = scripts[script]!.split(' && ').find((part) => part.startsWith('esbuild '));
  expect(command, `${script} runs esbuild`).toBeDefined();
  const args = command!.split(' ').slice(1);
  const out = args.findIndex((arg) => arg.startsWith('--outdir='));
  expect(out, `${script} writes a folder (code splitting), not one file`).toBeGreaterThan(0);
  args[out] = `--outdir=${outdir}`;
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), args, { cwd: ROOT, stdio: 'pipe' });
  return outdir;
}

const STATIC = /^import\s(?:[^;]*?\sfrom\s)?"([^"]+)"/gm;
const DYNAMIC = /\bimport\("([^"]+)"\)/g;
const packageOf = (name: string) =>
  name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!;

/** Packages the entry imports at start (its static imports and its chunks', transitively), and later. */
function imports(dir: string, entry: string): { atStart: Set<string>; later: Set<string> } {
  const atStart = new Set<string>();
  const later = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string, eager: boolean) => {
    if (seen.has(`${file}:${eager}`)) return;
    seen.add(`${file}:${eager}`);
    const code = readFileSync(join(dir, file), 'utf8');
    for (const [pattern, loadsNow] of [
      [STATIC, eager],
      [DYNAMIC, false],
    ] as const) {
      for (const [, name] of code.matchAll(pattern)) {
        if (name!.startsWith('./')) visit(name!.slice(2), loadsNow);
        else if (!name!.startsWith('node:')) (loadsNow ? atStart : later).add(packageOf(name!));
      }
    }
  };
  visit(entry, true);
  for (const name of atStart) later.delete(name);
  return { atStart, later };
}

describe.each([
  ['build:core', 'cli.js'],
  ['build:electron', 'main.js'],
])('%s', (script, entry) => {
  it('loads no optional feature at start; metrics, MCP and the tunnel client come with their first use', () => {
    const dir = build(script, join(scratch, script.replace(':', '-')));
    const { atStart, later } = imports(dir, entry);
    expect(atStart.has('koa')).toBe(true); // the walk finds what is there
    expect(OPTIONAL.filter((name) => atStart.has(name))).toEqual([]);
    // Redis is required by name when a connection is built (src/state/redis-connection.ts).
    expect([...later].sort()).toEqual(expect.arrayContaining(OPTIONAL.filter((name) => name !== 'ioredis')));
  });
});
