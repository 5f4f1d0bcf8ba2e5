// `npm start`: opens the desktop app, or says plainly why it cannot (no Electron binary on this machine).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export function electronBinary(): string | undefined {
  try {
    const dir = dirname(require.resolve('electron/package.json'));
    const pathFile = join(dir, 'path.txt');
    if (!existsSync(pathFile)) return undefined;
    const binary = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const binary = electronBinary();
  if (!binary) {
    console.error(
      [
        'The Electron binary is not installed, so the desktop app cannot open here.',
        "On a desktop with internet, run `npm install`: package.json allows electron's install script,",
        'which downloads the binary (unless ELECTRON_SKIP_BINARY_DOWNLOAD is set).',
        'On a server, run the same agent headless: npm run serve',
      ].join('\n'),
    );
    process.exit(1);
  }
  const child = spawn(binary, ['.', ...process.argv.slice(2)], { stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
}
