#!/usr/bin/env node
// `agent-bridge serve [flags]` (`npx agent-bridge serve` in a checkout, or from an installed package): the
// headless agent, as `npm run serve` runs it, from the core bundled by `npm run build:core` (the `prepare`
// script builds it at `npm install`). `--version` needs no build: it reads package.json.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [first] = process.argv.slice(2);
if (first === '--version' || first === '-v' || first === 'version') {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  console.log(`agent-bridge ${pkg.version} (SAMVAD ${pkg.protocolVersions.samvad})`);
  process.exit(0);
}

const core = fileURLToPath(new URL('../dist/core/cli.js', import.meta.url));
if (!existsSync(core)) {
  console.error(
    'agent-bridge: the headless core is not built in this checkout: run `npm run prepare` once (it builds the ' +
      'core and the console UI), or start it with `npm run serve`, which builds them.',
  );
  process.exit(1);
}
await import(pathToFileURL(core).href);
