import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The `files:` list of electron-builder.yml (a flat list of quoted or bare patterns). */
function builderFiles(): string[] {
  const lines = read('electron-builder.yml').split('\n');
  const start = lines.findIndex((line) => line.trim() === 'files:');
  const patterns: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^\s+-\s+'?([^']+?)'?\s*$/.exec(line);
    if (!match) break;
    patterns.push(match[1]!);
  }
  return patterns;
}

function covered(file: string, patterns: string[]): boolean {
  let included = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    const glob = negated ? pattern.slice(1) : pattern;
    const regex = new RegExp(
      `^${glob
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\/\*/g, '.+')
        .replace(/\*\*\//g, '(?:.+/)?')
        .replace(/\*/g, '[^/]*')}$`,
    );
    if (regex.test(file)) included = !negated;
  }
  return included;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe('packaging (electron-builder)', () => {
  beforeAll(() => {
    // The desktop bundle, the icons and the UI are what the installers carry: build them as `npm run package` does.
    execFileSync('npm', ['run', '-s', 'build:electron'], { cwd: ROOT, stdio: 'pipe' });
    if (!existsSync(join(ROOT, 'dist/renderer/index.html')))
      execFileSync('npx', ['vite', 'build'], { cwd: ROOT, stdio: 'pipe' });
  }, 120_000);

  it('names every file the app needs at run time, and no source maps', () => {
    const patterns = builderFiles();
    const runtime = ['package.json', ...filesUnder('dist/electron'), ...filesUnder('dist/renderer')].filter(
      (f) => !f.endsWith('.map'),
    );
    expect(runtime).toContain('dist/electron/main.js');
    expect(runtime).toContain('dist/electron/icons/tray-online.png');
    expect(runtime).toContain('dist/renderer/index.html');
    for (const file of runtime) expect(covered(file, patterns), file).toBe(true);
    expect(covered('dist/electron/main.js.map', patterns)).toBe(false);
    expect(covered('src/app.ts', patterns)).toBe(false);
  });

  it('points package.json main at the bundle, and every package the bundle imports is a production dependency', () => {
    const pkg = JSON.parse(read('package.json')) as {
      main: string;
      dependencies: Record<string, string>;
      allowScripts?: Record<string, boolean>;
    };
    expect(pkg.main).toBe('dist/electron/main.js');
    // The entry and its chunks (code loaded when a feature switches on, e.g. metrics or MCP).
    const bundle = filesUnder('dist/electron')
      .filter((file) => file.endsWith('.js'))
      .map(read)
      .join('\n');
    const imported = new Set(
      [
        ...bundle.matchAll(
          /^import\s(?:[^;]*?\sfrom\s)?["']([^"'.][^"']*)["']|\bimport\(["']([^"'.][^"']*)["']\)/gm,
        ),
      ]
        .map((m) => m[1] ?? m[2]!)
        .filter((name) => !name.startsWith('node:'))
        .map((name) => (name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!)),
    );
    imported.delete('electron'); // provided by the runtime itself
    expect(imported.size).toBeGreaterThan(3);
    for (const name of imported)
      expect(pkg.dependencies, `${name} must be in dependencies`).toHaveProperty(name);
    // npm 11 skips install scripts unless allowed: electron's is not, so no install ever downloads a desktop
    // runtime; `npm start` fetches the binary on a desktop (scripts/start-desktop.ts).
    expect(pkg.allowScripts?.electron).toBe(false);
  });

  it("is valid by electron-builder's own schema, and publishes to the tag's GitHub release with update metadata", async () => {
    // electron-builder's validation, as `electron-builder` runs it before building (a typo fails here).
    const require = createRequire(import.meta.url);
    const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
      getConfig(dir: string, file: string, options: null): Promise<Record<string, unknown>>;
      validateConfiguration(config: Record<string, unknown>, logger: unknown): Promise<void>;
    };
    const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => unknown };
    const config = await getConfig(ROOT, 'electron-builder.yml', null);
    await validateConfiguration(config, new DebugLogger(false));
    await expect(
      validateConfiguration(
        { ...config, publish: { provider: 'github', releasType: 'release' } },
        new DebugLogger(false),
      ),
    ).rejects.toThrow(/does not match the API schema/);

    const builder = yaml.load(read('electron-builder.yml')) as {
      productName: string;
      artifactName: string;
      publish: { provider: string; owner?: string; repo?: string };
      mac: { target: string[] };
      linux: { executableName: string };
    };
    // The owner and the repository come from the release workflow's context, never written here.
    expect(builder.publish).toEqual({ provider: 'github', releaseType: 'release' });
    // A Mac updates from the zip (Squirrel.Mac); the dmg is for the first install.
    expect(builder.mac.target).toEqual(['dmg', 'zip']);
    // A release asset's name keeps no space, and each architecture has its own file names.
    expect(builder.artifactName).not.toMatch(/\s/);
    expect(builder.artifactName).toContain('${arch}');
    // The smoke test starts the app at these paths (release.yml's matrix).
    const apps = (
      yaml.load(read('.github/workflows/release.yml')) as {
        jobs: { build: { strategy: { matrix: { include: { app: string }[] } } } };
      }
    ).jobs.build.strategy.matrix.include.map((entry) => entry.app);
    expect(apps).toEqual([
      `release/linux-unpacked/${builder.linux.executableName}`,
      `release/mac-arm64/${builder.productName}.app/Contents/MacOS/${builder.productName}`,
      `release/mac/${builder.productName}.app/Contents/MacOS/${builder.productName}`,
      `release/win-unpacked/${builder.productName}.exe`,
    ]);
  });

  const electronDist = process.env.ELECTRON_DIST ?? join(ROOT, 'node_modules/electron/dist');
  const haveElectron =
    existsSync(join(electronDist, 'electron')) || existsSync(join(electronDist, 'electron.exe'));
  if (!haveElectron) {
    console.warn(
      `SKIPPED: electron-builder --dir needs an unpacked Electron (set ELECTRON_DIST); none at ${electronDist}.`,
    );
  }
  it.skipIf(!haveElectron)(
    'builds the unpacked app with electron-builder --dir',
    () => {
      rmSync(join(ROOT, 'release'), { recursive: true, force: true });
      execFileSync(
        'npx',
        ['electron-builder', '--dir', '--config', 'electron-builder.yml', `-c.electronDist=${electronDist}`],
        {
          cwd: ROOT,
          stdio: 'pipe',
          timeout: 300_000,
        },
      );
      expect(readdirSync(join(ROOT, 'release')).some((name) => name.endsWith('-unpacked'))).toBe(true);
    },
    320_000,
  );
});
