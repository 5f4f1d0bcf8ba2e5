#!/usr/bin/env node
/** Headless entry: `agent-bridge serve [flags]` (npm run serve -- [flags]) and `agent-bridge keys ...`. */
import { join } from 'node:path';
import { AGENT_VERSION, AgentBridgeApp, type AppEvents } from './app.js';
import { PROTOCOL_VERSION } from './protocol/index.js';
import type { EnvelopeEvent } from './agent/events.js';
import type { AccessPolicy } from './protocol/console-api.js';
import type { TunnelState } from './tunnel/state.js';
import { bannerLines, targetLine, transitionLines } from './bridge/gateway-words.js';
import { CONSOLE_FILE, consoleLinkLines, mayPrintConsoleToken } from './console/console-file.js';
import { startConsole, type ConsoleHandle, type ConsoleOptions } from './console/console-server.js';
import { runKeysCommand } from './cli/keys-command.js';
import { callerLabel } from './cli/caller-label.js';
import { defaultDataDir } from './settings/data-dir.js';
import { installConsoleGuard } from './lib/console-guard.js';
import { printable } from './lib/text.js';
import { SERVE_HELP, parseServeArgs } from './settings/flags.js';
import { maskedRedisUrl } from './state/redis-connection.js';
import { addressLines } from './tunnel/address-change.js';
import { openSettingsStore, type SettingsStore } from './settings/store.js';

/**
 * What events print while the start banner is being printed (the tunnel connects meanwhile), printed once
 * it is out whole; undefined after that.
 */
let held: (() => void)[] | undefined = [];

function releaseHeld(): void {
  const lines = held ?? [];
  held = undefined;
  for (const print of lines) print();
}

async function main(argv: string[]): Promise<void> {
  // Before anything runs: what a library prints may quote a caller (outside review, finding 4).
  installConsoleGuard();
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
  const parsed = parseServeArgs(rest, process.env);
  if (parsed.help) {
    console.log(SERVE_HELP);
    return;
  }
  const dataDir = parsed.dataDir ?? defaultDataDir();
  const store = openSettingsStore(dataDir);
  const settings = { ...store.get(), ...parsed.overrides };

  const app = new AgentBridgeApp({ dataDir, settings });
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
    if (change.kind !== 'new-sender') return;
    const { sender, name, code, preview, note } = change.pending;
    say(
      `Access: ${sender}${name ? ` ("${name}")` : ''} asks to talk to your agent (request ${code}` +
        `${preview ? `, first message: "${preview}"` : ''}).${note ? ` It was ${note}.` : ''}` +
        ` Approve or deny it on the console's Access page.`,
    );
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
  on('tunnel', (state) => say(describeTunnel(state)));
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
  console.log(`  Agent id:   ${card.id}`);
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
    origins: parsed.origins,
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

function describeAccess(policy: AccessPolicy): string {
  if (policy === 'pairing') return 'pairing: each new sender waits for your approval (console > Access)';
  if (policy === 'allowlist') return 'allowlist: only senders you approved reach the gateway';
  return 'open: WARNING, any agent that signs its envelope reaches your gateway agent';
}

function describeTunnel(state: TunnelState): string {
  switch (state.status) {
    case 'off':
      return 'Tunnel: off';
    case 'connecting':
      return `Tunnel: connecting (attempt ${state.attempt})...`;
    case 'online': {
      const reach = state.reachability;
      // The URL stands alone (a space after it), so it can be copied or matched out of the line.
      if (reach?.state === 'reachable') return `Tunnel: online at ${state.url} (reachable from outside)`;
      if (reach?.state === 'unreachable')
        return `Tunnel: online at ${state.url} but a call through it failed: ${reach.problem ?? 'no answer'}; checking again`;
      return `Tunnel: online at ${state.url}${reach ? ' (checking that callers reach this agent through it)' : ''}`;
    }
    case 'reconnecting': {
      const seconds = Math.max(0, Math.round((Date.parse(state.nextTryAt) - Date.now()) / 1000));
      return `Tunnel: ${state.lastError}; reconnecting in ${seconds} s (attempt ${state.attempt})`;
    }
    case 'failed':
      return `Tunnel: failed: ${state.reason}`;
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

function formatEnvelope(e: EnvelopeEvent): string {
  const out = e.direction === 'out';
  const verdict = e.held ? 'held' : e.verdict === 'accepted' ? 'accepted' : `refused at ${e.verdict}`;
  const parts = [
    clock(e.time),
    ...(out ? ['out'] : []),
    String(e.status),
    verdict,
    e.mode ?? '-',
    e.skill ?? '-',
    // A call out names the agent called; a call in, its sender.
    out ? `-> ${e.callee ?? '-'}` : callerLabel(e),
    `${e.durationMs} ms`,
  ];
  if (out && e.replySignature) parts.push(REPLY_WORDS[e.replySignature]);
  if (e.code) parts.push(e.code);
  if (e.screen) parts.push(`[injection screen: ${e.screen.rule}]`);
  if (e.message && e.verdict !== 'accepted') parts.push(`"${e.message}"`);
  if (e.diagnosis) parts.push(`[${e.diagnosis}]`);
  return parts.join(' ');
}

const clock = (iso: string) => iso.slice(11, 19);

const REPLY_WORDS: Record<NonNullable<EnvelopeEvent['replySignature']>, string> = {
  verified: 'reply verified',
  unsigned: 'reply unsigned',
  failed: 'reply NOT verified',
};

/**
 * Prints lines that carry remote text (sender ids, skill names, refusal messages, a gateway's or registry's
 * words): each argument is one line, its control characters escaped, so nothing a caller sends can forge
 * a line of this output (service logs) or drive the operator's terminal.
 */
function say(...lines: string[]): void {
  console.log(lines.map(printable).join('\n'));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  releaseHeld();
  console.error(`agent-bridge: ${(error as Error).message}`);
  process.exit(1);
});
