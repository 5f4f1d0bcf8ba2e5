#!/usr/bin/env node
/** Headless entry: `agent-bridge serve [flags]` (npm run serve -- [flags]) and `agent-bridge keys ...`. */
import { AGENT_VERSION } from './app.js';
import { PROTOCOL_VERSION } from './protocol/index.js';
import { runKeysCommand } from './cli/keys-command.js';
import { releaseHeld, runServeCommand } from './cli/serve-command.js';

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    console.log(`agent-bridge ${AGENT_VERSION} (SAMVAD ${PROTOCOL_VERSION})`);
    return;
  }
  const [command = 'serve', ...rest] = argv[0]?.startsWith('-') ? ['serve', ...argv] : argv;
  if (command === 'keys') return runKeysCommand(rest);
  if (command !== 'serve') {
    throw new Error(
      `Unknown command "${command}": use serve or keys. Run: agent-bridge --help, or agent-bridge keys --help`,
    );
  }
  return runServeCommand(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  releaseHeld();
  console.error(`agent-bridge: ${(error as Error).message}`);
  process.exit(1);
});
