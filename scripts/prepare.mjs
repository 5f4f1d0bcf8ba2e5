// npm's `prepare`: it runs after `npm install` and `npm ci` in a checkout, when this repository is installed
// as a git dependency (then it is the only build the package gets), and before `npm pack`. It builds the
// headless core and the console UI, so `npx agent-bridge serve` works at once: a second or two, no network,
// never Electron. Plain JavaScript, as tsx is a dev dependency: without the dev dependencies
// (`npm install --omit=dev`) there is nothing to build with, so it says so and lets the install succeed.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const missing = ['esbuild', 'vite'].filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  console.warn(
    `agent-bridge prepare: not building (${missing.join(' and ')} not installed: the dev dependencies were ` +
      'left out). `npx agent-bridge serve` needs a build: install with the dev dependencies, or install the ' +
      'tarball that `npm pack` makes.',
  );
  process.exit(0);
}

const cwd = fileURLToPath(new URL('..', import.meta.url));
// npm sets npm_execpath for its scripts; run the same npm, so this works where `npm` is not on PATH.
const npm = process.env.npm_execpath;
for (const args of [
  ['run', '-s', 'build:core'],
  ['run', '-s', 'build', '--', '--logLevel', 'warn'],
]) {
  const result = npm
    ? spawnSync(process.execPath, [npm, ...args], { cwd, stdio: 'inherit' })
    : spawnSync('npm', args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
