#!/usr/bin/env node
// `agent-bridge serve [flags]` (`npx agent-bridge serve` in a checkout, or from an installed tarball): the
// headless agent, as `npm run serve` runs it, from the core bundled by `npm run build:core`.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const core = fileURLToPath(new URL('../dist/core/cli.js', import.meta.url));
if (!existsSync(core)) {
  console.error(
    'agent-bridge: the headless core is not built in this checkout: run `npm run build && npm run build:core` ' +
      'once (or start it with `npm run serve`, which builds it).',
  );
  process.exit(1);
}
await import(pathToFileURL(core).href);
