// `npm start`: opens the desktop app. Electron's binary is not downloaded by `npm install` (a server never
// needs a desktop runtime, and a locked-down machine cannot reach its download host): the first `npm start`
// on a desktop fetches it, with progress, through electron's own installer; where that is impossible it says
// plainly why and what to run instead.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

function electronDir(): string | undefined {
  try {
    return dirname(require.resolve('electron/package.json'));
  } catch {
    return undefined;
  }
}

export function electronBinary(): string | undefined {
  const dir = electronDir();
  if (!dir) return undefined;
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}

/** Runs electron's own installer (it downloads and checks the binary for this platform). */
function downloadElectron(): boolean {
  const dir = electronDir();
  if (!dir) return false;
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string })
    .version;
  console.log(`Downloading Electron ${version} for the desktop app (once; about 100 MB)...`);
  const env = { ...process.env };
  delete env.ELECTRON_SKIP_BINARY_DOWNLOAD;
  const result = spawnSync(process.execPath, [join(dir, 'install.js')], { stdio: 'inherit', env });
  return result.status === 0 && electronBinary() !== undefined;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const binary = electronBinary() ?? (downloadElectron() ? electronBinary() : undefined);
  if (!binary) {
    console.error(
      [
        'The Electron binary could not be downloaded, so the desktop app cannot open here.',
        "Electron's download host must be reachable (or set ELECTRON_MIRROR to a mirror you can reach);",
        'then run `npm start` again.',
        'On a server, run the same agent headless: npm run serve',
      ].join('\n'),
    );
    process.exit(1);
  }
  const child = spawn(binary, ['.', ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
}
