#!/usr/bin/env node
/**
 * Headless entry: `agent-bridge serve [flags]` (npm run serve -- [flags]), `agent-bridge keys ...` and
 * `agent-bridge call <agent> "message"`.
 */
import { AGENT_VERSION } from './app.js';
import { PROTOCOL_VERSION } from './protocol/index.js';
import { runCallCommand } from './cli/call-command.js';
import { runKeysCommand } from './cli/keys-command.js';
import { releaseHeld, runServeCommand } from './cli/serve-command.js';
import { installConsoleGuard } from './lib/console-guard.js';

async function main(argv: string[]): Promise<void> {
  // Before anything runs: what a library prints may quote a caller (outside review, finding 4).
  installConsoleGuard();
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    console.log(`agent-bridge ${AGENT_VERSION} (SAMVAD ${PROTOCOL_VERSION})`);
    return;
  }
  const [command = 'serve', ...rest] = argv[0]?.startsWith('-') ? ['serve', ...argv] : argv;
  if (command === 'keys') return runKeysCommand(rest);
  if (command === 'call') return runCallCommand(rest);
  if (command !== 'serve') {
    throw new Error(
      `Unknown command "${command}": use serve, keys or call. Run: agent-bridge --help, agent-bridge keys --help or agent-bridge call --help`,
    );
  }
  return runServeCommand(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  releaseHeld();
  console.error(`agent-bridge: ${(error as Error).message}`);
  process.exit(1);
});
