// A server install never needs Electron (the servers issue): `npm install` runs no Electron download (the
// project does not allow electron's install script), the packed tarball carries the built headless core and
// UI with a `bin`, and `agent-bridge serve` from it runs the agent. `npm start` fetches Electron's binary
// itself, the first time, and says plainly what to do when it cannot.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { electronBinary } from '../../scripts/start-desktop.js';
import { tempDir } from '../helpers/agents.js';
import { freePort } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const ROOT = join(import.meta.dirname, '../..');
const work = tempDir('agent-bridge-pack-');
let unpacked: string;
let files: string[];

beforeAll(() => {
  execFileSync('npm', ['run', '-s', 'build:core'], { cwd: ROOT, stdio: 'pipe' });
  if (!existsSync(join(ROOT, 'dist/renderer/index.html'))) {
    execFileSync('npx', ['vite', 'build'], { cwd: ROOT, stdio: 'pipe' });
  }
  // The build ran above (as `prepare` would): pack without running it again.
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
      cwd: ROOT,
      encoding: 'utf8',
    }),
  ) as { filename: string; files: { path: string }[] }[];
  files = packed!.files.map((file) => file.path);
  execFileSync('tar', ['xzf', join(work, packed!.filename), '-C', work]);
  unpacked = join(work, 'package');
  // What `npm install <tarball>` would add: its dependencies (the checkout's, linked, for speed).
  symlinkSync(join(ROOT, 'node_modules'), join(unpacked, 'node_modules'));
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a server install', () => {
  it('never downloads Electron: its install script is not allowed, so npm install needs no variable', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      allowScripts: Record<string, boolean>;
      bin: Record<string, string>;
    };
    expect(pkg.allowScripts.electron).toBe(false);
    expect(pkg.bin['agent-bridge']).toBe('bin/agent-bridge.js');
    // .ci/run installs without ELECTRON_SKIP_BINARY_DOWNLOAD: CI is the locked-down machine.
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).not.toMatch(
      /^\s*export ELECTRON_SKIP_BINARY_DOWNLOAD/m,
    );
  });

  it('packs the headless core, the console UI and the bin, and the docs the README links to; no sources, no desktop shell', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/agent-bridge.js',
        'dist/core/cli.js',
        'dist/renderer/index.html',
        'package.json',
        'README.md',
        'docs/settings.md',
        'docs/troubleshooting.md',
      ]),
    );
    expect(files.filter((file) => /^(src|electron|test|renderer)\//.test(file))).toEqual([]);
  });

  it('`agent-bridge --version` and `serve` run from the unpacked tarball', async () => {
    const bin = join(unpacked, 'bin/agent-bridge.js');
    const version = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' });
    expect(version.stdout.trim()).toMatch(/^agent-bridge \d+\.\d+\.\d+ \(SAMVAD 1\.2\)$/);

    const dataDir = join(work, 'data');
    mkdirSync(dataDir);
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        bin,
        'serve',
        '--data-dir',
        dataDir,
        '--port',
        String(port),
        '--console-port',
        '0',
        '--tunnel',
        'none',
      ],
      { env: { PATH: process.env.PATH, HOME: work }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await until(() => output.includes('Console:'), 15_000, 'serve to start');
      const card = (await (await fetch(`http://127.0.0.1:${port}/.well-known/agent.json`)).json()) as {
        id: string;
      };
      expect(card.id).toBe(`agent://127.0.0.1:${port}`);
      // The console serves the packed UI.
      const consoleUrl = (JSON.parse(readFileSync(join(dataDir, 'console.json'), 'utf8')) as { url: string })
        .url;
      expect((await fetch(consoleUrl)).headers.get('content-type')).toMatch(/text\/html/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});

describe('the desktop path', () => {
  it.skipIf(electronBinary() !== undefined)(
    '`npm start` fetches Electron itself, and says what to do when its host cannot be reached',
    () => {
      // A mirror on a closed loopback port: the download fails at once, as on a locked-down machine.
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/start-desktop.ts'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: work, ELECTRON_MIRROR: 'http://127.0.0.1:9/' },
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stdout).toMatch(/Downloading Electron \d+\.\d+\.\d+ for the desktop app/);
      expect(result.stderr).toContain('The Electron binary could not be downloaded');
      expect(result.stderr).toContain('npm run serve');
    },
  );
});
