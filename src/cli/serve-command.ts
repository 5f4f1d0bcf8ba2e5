/** `agent-bridge serve [flags]` (npm run serve -- [flags]): the headless agent, its console and its output. */
import { join } from 'node:path';
import { AgentBridgeApp, type AppEvents } from '../app.js';
import type { TunnelState } from '../tunnel/state.js';
import { bannerLines, targetLine, transitionLines } from '../bridge/gateway-words.js';
import { CONSOLE_FILE, consoleLinkLines, mayPrintConsoleToken } from '../console/console-file.js';
import { startConsole, type ConsoleHandle, type ConsoleOptions } from '../console/console-server.js';
import { defaultDataDir } from '../settings/data-dir.js';
import { printable } from '../lib/text.js';
import { SERVE_HELP, parseServeArgs } from '../settings/flags.js';
import { maskedRedisUrl } from '../state/redis-connection.js';
import { addressLines } from '../tunnel/address-change.js';
import { openSettingsStore, type SettingsStore } from '../settings/store.js';
import {
  agentIdLine,
  clock,
  describeAccess,
  formatEnvelope,
  newKnockLine,
  newSenderLine,
} from './serve-lines.js';
import { TunnelLines } from './tunnel-lines.js';
import { checkDemoArgs, demoBannerLines, demoDataDir, startDemo } from '../demo/demo-mode.js';

/**
 * What events print while the start banner is being printed (the tunnel connects meanwhile), printed once
 * it is out whole; undefined after that.
 */
let held: (() => void)[] | undefined = [];

/** Prints what waited for the banner (also before an error ends the process, so nothing is lost). */
export function releaseHeld(): void {
  const lines = held ?? [];
  held = undefined;
  for (const print of lines) print();
}

export async function runServeCommand(rest: string[]): Promise<void> {
  const parsed = parseServeArgs(rest, process.env);
  if (parsed.help) {
    console.log(SERVE_HELP);
    return;
  }
  if (parsed.demo) checkDemoArgs(parsed);
  // A demo keeps a data dir of its own unless --data-dir names one (AGENT_BRIDGE_DATA_DIR is where it nests).
  const dataDir =
    parsed.demo && parsed.dataDirFrom !== 'flag' ? demoDataDir() : (parsed.dataDir ?? defaultDataDir());
  const store = openSettingsStore(dataDir);
  const given = { ...store.get(), ...parsed.overrides };
  const demo = parsed.demo ? await startDemo(dataDir, given, parsed) : undefined;
  const { settings, origins, env } = demo ?? { settings: given, origins: parsed.origins, env: process.env };

  const app = new AgentBridgeApp({ dataDir, settings, env, demo: demo !== undefined });
  const on = <K extends keyof AppEvents>(name: K, listener: (...args: AppEvents[K]) => void) => {
    const run = (...args: AppEvents[K]) => (held ? held.push(() => listener(...args)) : listener(...args));
    // Node's typings cannot narrow their conditional listener type through a generic K; the call is sound.
    app.on(name, run as never);
  };
  on('envelope', (event) => say(formatEnvelope(event)));
  on('outbound', (event) => say(formatEnvelope(event)));
  on('callback', (e) =>
    say(
      `${clock(e.time)} callback ${e.outcome} task ${e.taskId} (attempt ${e.attempt}${e.message ? `: ${e.message}` : ''})`,
    ),
  );
  // The gateway's state is in the start banner; from then on, each transition once.
  let bannerShown = false;
  app.on('gateway', (transition) => {
    const lines = transitionLines(transition);
    if (bannerShown && lines.length > 0) say(...lines);
  });

  on('access', (change) => {
    // Read at the time: the operator may turn contents on or off in the console while the agent runs.
    if (change.kind === 'new-sender')
      say(newSenderLine(change.pending, app.currentSettings.keepMessageContents));
    if (change.kind === 'new-knock') say(newKnockLine(change.knock, app.currentSettings.keepMessageContents));
  });
  let lastTarget = '';
  app.on('gatewayAgent', (view) => {
    const line = targetLine(view);
    if (bannerShown && line && line !== lastTarget) say(line);
    lastTarget = line;
  });

  on('state', (health) =>
    say(
      health.up
        ? 'Shared state: Redis answering again; calls are checked and accepted.'
        : `Shared state: ${health.problem}`,
    ),
  );
  const tunnelLines = new TunnelLines();
  on('tunnel', (state) => {
    const lines = tunnelLines.next(state);
    if (lines.length > 0) say(...lines);
  });
  on('address', (change) => say(...addressLines(change, app.registrar.record !== undefined)));
  on('registry', (state) => {
    if (state.status === 'registered' && !state.lastError)
      say(`Registered with ${state.record.registry} as ${state.record.id} (${state.record.url}).`);
    if (state.status !== 'registering' && state.lastError)
      say(`Registration failed: ${state.lastError.message}`, `  Fix: ${state.lastError.fix}`);
  });
  if (parsed.register) registerWhenReachable(app, settings.tunnel);

  let localUrl: string;
  try {
    localUrl = await app.start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new Error(
        `Port ${settings.port} on ${settings.host} is already in use: stop the other program or pass --port <another port>.`,
        { cause: error },
      );
    }
    throw error;
  }
  const card = app.card();
  console.log(`Agent Bridge ${card.version} (SAMVAD ${card.protocolVersion})`);
  if (demo) console.log(demoBannerLines(`agent://127.0.0.1:${new URL(localUrl).port}`, dataDir).join('\n'));
  // With a tunnel the id is the tunnel's address, unknown until it is online: never the loopback one.
  console.log(agentIdLine(card.id, settings.tunnel !== 'none' && app.tunnelState.status !== 'online'));
  console.log(`  Agent URL:  ${localUrl}`);
  if (settings.publicUrl) console.log(`  Public URL: ${app.agentUrl}`);
  console.log(`  Card:       ${localUrl}/.well-known/agent.json`);
  console.log(`  Data dir:   ${dataDir}`);
  if (app.shared) {
    const shared = `  State:      Redis at ${maskedRedisUrl(settings.redisUrl ?? '')}, shared with the other replicas`;
    console.log(printable(`${shared}${settings.keysFile ? `; keys in ${settings.keysFile}` : ''}`));
  }
  const operatorConsole = await openConsole(app, store, dataDir, {
    port: settings.consolePort,
    explicit: parsed.overrides.consolePort !== undefined,
    newToken: parsed.newConsoleToken,
    origins,
  });
  // The token only to a terminal: service and container output lands in logs (console-file.ts).
  const consoleFile = join(dataDir, CONSOLE_FILE);
  for (const line of consoleLinkLines(operatorConsole, consoleFile, mayPrintConsoleToken(process))) {
    console.log(line);
  }
  if (parsed.newConsoleToken) {
    console.log('              A new console token: earlier links and open tabs no longer work.');
  }
  console.log(
    `  MCP:        ${operatorConsole.mcp.url} (for your own agent; token in ${operatorConsole.mcp.file})`,
  );
  if (operatorConsole.mcp.movedFrom) {
    // The gateway's config holds the usual address: until it is updated, the operator's agent cannot call out.
    console.warn(
      `WARNING: the MCP URL changed: ${operatorConsole.mcp.movedFrom} -> ${operatorConsole.mcp.url}, because port ` +
        `${new URL(operatorConsole.mcp.movedFrom).port} is busy. Your gateway's config still points at the old one: ` +
        'free that port and restart, or update the entry (the console shows the command).',
    );
  }
  say(...bannerLines(await app.gatewayWatch.checked(), app.gatewayTarget.view));
  console.log(`  Access:     ${describeAccess(settings.access)}`);
  if (lastTarget) say(lastTarget);
  bannerShown = true;
  releaseHeld();

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing in-flight requests and stopping...`);
    // The agent first, so the traffic log (flushed by the console's close) records its last envelopes.
    app
      .stop()
      .then(() => operatorConsole.close())
      .then(() => demo?.gateway.close())
      .then(
        // Only now: the traffic log, tasks and access lists are on disk, so the process may be ended.
        () => process.stdout.write('Agent Bridge stopped.\n', () => process.exit(0)),
        (error: unknown) => {
          console.error(`Stopped with an error: ${(error as Error).message}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Starts the operator console. When the saved or default port is taken (another agent, a test run), it
 * takes a free port instead and says so; a port given with --console-port must be free.
 */
async function openConsole(
  app: AgentBridgeApp,
  store: SettingsStore,
  dataDir: string,
  options: Pick<ConsoleOptions, 'port' | 'newToken' | 'origins'> & { explicit: boolean },
): Promise<ConsoleHandle> {
  const { explicit, ...choices } = options;
  const { port } = choices;
  try {
    return await startConsole({ app, store, dataDir, ...choices });
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    if (inUse && !explicit && port !== 0) {
      console.log(
        `Console port ${port} is in use; the console takes a free port (choose one with --console-port).`,
      );
      // The token was replaced (and saved) before the first try.
      return openConsole(app, store, dataDir, { ...options, port: 0, explicit: true, newToken: false });
    }
    await app.stop(0);
    if (inUse) {
      throw new Error(
        `Console port ${port} on 127.0.0.1 is already in use: stop the other program or pass --console-port <another port> (0 picks a free one).`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** --register: as soon as the public URL proves reachable; tried again at each reconnect until it works. */
function registerWhenReachable(app: AgentBridgeApp, tunnel: string): void {
  if (tunnel === 'none') {
    setImmediate(() => void app.register().catch(() => undefined /* reported with its fix */));
    return;
  }
  // Once the check through the public URL passed (the registry fetches the card there too); one try at a
  // time: the online state is announced again when the check's finding changes.
  let trying = false;
  const onState = (state: TunnelState) => {
    if (state.status !== 'online' || trying) return;
    const reach = state.reachability?.state;
    if (reach === 'checking' || reach === 'unreachable') return;
    trying = true;
    app
      .register()
      .then(
        () => app.off('tunnel', onState),
        () => undefined /* reported through the registry event with its fix */,
      )
      .finally(() => (trying = false));
  };
  app.on('tunnel', onState);
}

/**
 * Prints lines that carry remote text (sender ids, skill names, refusal messages, a gateway's or registry's
 * words): each argument is one line, its control characters escaped, so nothing a caller sends can forge
 * a line of this output (service logs) or drive the operator's terminal.
 */
function say(...lines: string[]): void {
  console.log(lines.map(printable).join('\n'));
}
