// A new user's first minutes with a clone (issue 16): `npx agent-bridge --version` works before any build,
// the `prepare` script (what npm runs after `npm install` / `npm ci`, and for a git dependency) builds the
// core and the UI quickly, offline and without Electron, and `npm run serve` starts without the UI build's
// chatter. Each test works in a fresh copy of this checkout (its tracked and new files, no dist/), with the
// checkout's node_modules linked in place of an install: npm's own install is not repeated here, only the
// script it runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/protocol/index.js';
import { tempDir } from '../helpers/agents.js';

const ROOT = join(import.meta.dirname, '../..');
const work = tempDir('agent-bridge-clone-');

/** A copy of the checkout as git sees it (committed and new files, nothing ignored), with or without deps. */
function freshCopy(name: string, withDependencies: boolean): string {
  const dir = join(work, name);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  if (withDependencies) symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

// Only what a user's shell would have: no test runner's variables, no npm_* from the outer `npm test`.
const ENV = { PATH: process.env.PATH, HOME: work };

let clone: string;

beforeAll(() => {
  clone = freshCopy('clone', true);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a fresh clone', () => {
  it('answers `agent-bridge --version` before anything is built', () => {
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const result = spawnSync(process.execPath, ['bin/agent-bridge.js', '--version'], {
      cwd: clone,
      encoding: 'utf8',
      env: ENV,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`agent-bridge 0.1.0 (SAMVAD ${PROTOCOL_VERSION})\n`);
    // The same words as the core's own --version (npm run serve -- --version goes there).
    const core = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--version'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: ENV,
    });
    expect(core.stdout).toBe(result.stdout);
  }, 30_000);

  it('is built by `prepare` (as `npm install` runs it): the core and the UI, quietly, without Electron', () => {
    const pkg = JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // One build for install, git dependencies and pack: `npm pack` runs `prepare` too.
    expect(pkg.scripts.prepare).toBeDefined();
    expect(pkg.scripts.prepack).toBeUndefined();
    const result = spawnSync('npm', ['run', '-s', 'prepare'], { cwd: clone, encoding: 'utf8', env: ENV });
    expect(result.stderr + result.stdout).toBe('');
    expect(result.status).toBe(0);
    expect(existsSync(join(clone, 'dist/core/cli.js'))).toBe(true);
    expect(existsSync(join(clone, 'dist/renderer/index.html'))).toBe(true);
    expect(existsSync(join(clone, 'dist/electron'))).toBe(false);

    const help = spawnSync(process.execPath, ['bin/agent-bridge.js', 'serve', '--help'], {
      cwd: clone,
      encoding: 'utf8',
      env: ENV,
    });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: agent-bridge serve/);
  }, 60_000);

  it('`npm run serve` prints its own output first: the UI build is quiet', () => {
    const result = spawnSync('npm', ['run', '-s', 'serve', '--', '--help'], {
      cwd: clone,
      encoding: 'utf8',
      env: ENV,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: agent-bridge serve/);
  }, 60_000);

  it('installs without the dev dependencies: `prepare` says it has nothing to build with, and succeeds', () => {
    const bare = freshCopy('bare', false);
    const result = spawnSync('npm', ['run', '-s', 'prepare'], { cwd: bare, encoding: 'utf8', env: ENV });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('not building (esbuild and vite not installed');
    expect(existsSync(join(bare, 'dist'))).toBe(false);
  });
});
