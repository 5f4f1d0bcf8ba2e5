// Global setup of `npm test`: holds the agent's and the console's default ports (8787, 8788) for the whole
// run, as an operator's running agent would (issue 26, item 2: `npm test` failed with EADDRINUSE while the
// agent ran). Any test that listens on a fixed default port fails here as it would on that machine. A port
// already taken (the operator's agent is running) is simply left to its owner.
import { createServer, type Server } from 'node:net';
import { DEFAULT_SETTINGS } from '../src/settings/schema.js';

function hold(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  const held = await Promise.all([DEFAULT_SETTINGS.port, DEFAULT_SETTINGS.consolePort].map(hold));
  return async () => {
    await Promise.all(
      held.map((server) => server && new Promise<void>((resolve) => server.close(() => resolve()))),
    );
  };
}
