import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import type { AgentBridgeApp, AppEvents } from '../app.js';
import { errorCode } from '../lib/atomic-file.js';
import { loggedError } from '../lib/text.js';
import type { TunnelStatus } from '../protocol/console-api.js';
import type { SettingName } from '../settings/schema.js';
import type { OverrideOrigin } from '../settings/sources.js';
import type { SettingsStore } from '../settings/store.js';
import { consoleApi } from './api.js';
import { requireToken, sameOriginOnly } from './auth.js';
import { ConsoleToken } from './console-file.js';
import { errorsAsJson } from './error-reply.js';
import { EventStreams, type EventStreamOptions } from './events-stream.js';
import { McpConsole } from './mcp-console.js';
import { METRICS_PATH, metricsRoute } from './metrics-route.js';
import type { BridgeMetrics } from '../metrics/metrics.js';
import { AGENT_VERSION } from '../app.js';
import { A2ACredentials } from '../mcp/a2a-credentials.js';
import { MCP_PATH } from '../mcp/openclaw-setup.js';
import { securityHeaders } from './security-headers.js';
import { ConsoleSettings } from './settings-api.js';
import { DEFAULT_STATIC_DIR, staticFiles } from './static-files.js';
import { buildStatus, tunnelView } from './status.js';
import { TrafficLog, type TrafficLogOptions } from './traffic-log.js';

export interface ConsoleOptions {
  app: AgentBridgeApp;
  /** The settings store the app was built from: PUT /api/settings saves through it. */
  store: SettingsStore;
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  /** Only 127.0.0.1: the console must never be reachable from another machine or through the tunnel. */
  host?: string;
  /** The built UI; default `dist/renderer` at the repository root. */
  staticDir?: string;
  traffic?: Omit<TrafficLogOptions, 'dataDir' | 'secrets'>;
  events?: EventStreamOptions;
  /** Unexpected errors (answered as a plain 500); default: printed to stderr. */
  onError?: (error: unknown) => void;
  /** Replace the saved console token before listening (`--new-console-token`). */
  newToken?: boolean;
  /** The flags and environment variables that set settings for this run (Settings shows where each comes from). */
  origins?: Partial<Record<SettingName, OverrideOrigin>>;
  /** How long "Check again" waits for the gateway before answering "still checking"; default 8 s. */
  gatewayCheckWaitMs?: number;
}

/**
 * The console listener's own limits. Node counts `headersTimeout` and `requestTimeout` until a request has
 * been received, never while a handler works: a slow answer is the route's to bound (the gateway check
 * answers "still checking" past `gatewayCheckWaitMs`). An idle connection is kept well past Node's 5 s, so
 * a client that reuses it a moment later (a browser, or a script with a keep-alive agent on a loaded
 * machine) never sends its request into a close: that race is a dropped request, "socket hang up".
 */
export const CONSOLE_LISTENER = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
} as const;

export interface ConsoleHandle {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The console token now (kept in console.json across restarts; the operator may replace it). */
  readonly token: string;
  /** The MCP server on this listener: its URL, mcp.json, and the usual URL when the port was busy. */
  mcp: { url: string; file: string; movedFrom?: string };
  /** Ends the event streams, stops listening, flushes the traffic log; console.json keeps the token, not the URL. */
  close(): Promise<void>;
}

/**
 * The operator console (DESIGN.md): a second listener, on loopback only, serving the UI at `/`, the
 * token-protected API at `/api/*` and Prometheus metrics at `/metrics` (token too, unless `metricsNoAuth`).
 * It keeps its token in `<dataDir>/console.json` (with the URL) and prints nothing itself.
 */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleHandle> {
  const { app, dataDir, host = '127.0.0.1' } = options;
  if (host !== '127.0.0.1') {
    throw new Error(
      `The console listens on 127.0.0.1 only (got host "${host}"): it controls the agent, so it must never be ` +
        'reachable from another machine. Reach it remotely through an SSH tunnel (ssh -L) instead.',
    );
  }
  // An MCP tool's unexpected error may quote what a called agent answered: its message as one escaped line.
  const onError =
    options.onError ??
    ((error: unknown) => console.error(`Console: unexpected error: ${loggedError(error)}`));
  const token = new ConsoleToken(dataDir);
  if (options.newToken) token.regenerate();
  const startedAt = Date.now();
  let port = 0;
  // The port the settings ask for: the gateway's config holds the MCP URL on it.
  const configuredPort = app.currentSettings.consolePort;
  const mcp = new McpConsole(app, dataDir);
  // Credentials for A2A agents the operator's agent calls: write-only here, sent only by the MCP tools.
  const credentials = new A2ACredentials(dataDir);

  const events = new EventStreams(options.events);
  const log = new TrafficLog({
    ...options.traffic,
    dataDir,
    // Masked wherever they might appear (a diagnosis, a preview): the log must never hold them.
    secrets: () => [
      app.currentSettings.gatewayToken ?? '',
      ...app.currentSettings.bearerTokens,
      ...credentials.secrets(),
    ],
  });
  const settings = new ConsoleSettings(app, options.store, () => events.state('settings'), options.origins);
  // A tunnel that fails to start leaves no supervisor behind: remember the failure so the status shows it.
  let lastTunnel: TunnelStatus | undefined;
  const tunnel = (): TunnelStatus => {
    const live = app.tunnelState;
    return live.status === 'off' && lastTunnel?.status === 'failed' ? lastTunnel : live;
  };
  // Metrics switch on with the first scrape: a console nobody scrapes never loads prom-client. (Prometheus
  // counts increases between scrapes, so what came before its first scrape is never part of one anyway.)
  const metrics = once(async (): Promise<BridgeMetrics> => {
    const { createMetrics } = await import('../metrics/metrics.js');
    return createMetrics({ app, tunnel });
  });

  const unsubscribe = [
    log.subscribe((entry) => events.envelope(entry)),
    on(app, 'envelope', (event) => log.add(event)),
    on(app, 'outbound', (event) => log.add(event)),
    on(app, 'gateway', () => events.state('gateway')),
    on(app, 'gatewayAgent', () => events.state('gateway')),
    on(app, 'skills', () => events.state('skills')),
    on(app, 'tunnel', (state) => {
      lastTunnel = state;
      events.state('tunnel');
    }),
    on(app, 'address', () => events.state('tunnel')),
    on(app, 'registry', () => events.state('registry')),
    on(app, 'card', () => events.state('agent')),
    on(app, 'access', (change) => {
      if (change.kind === 'new-sender') events.access(change);
      events.state('access');
    }),
    on(app, 'state', () => events.state('state')),
    app.keys.onChange(() => events.state('keys')),
    () => metrics.loaded?.then((loaded) => loaded.close()),
  ];

  const koa = new Koa();
  koa.silent = true;
  const api = consoleApi({
    app,
    log,
    events,
    settings,
    mcp,
    credentials,
    consoleToken: () => ({ token: token.regenerate(), file: token.path }),
    tunnel: () => tunnelView(app, tunnel()),
    gatewayCheckWaitMs: options.gatewayCheckWaitMs ?? 8000,
    status: () =>
      buildStatus({
        app,
        log,
        tunnel: tunnel(),
        restartNeeded: settings.restartNeeded,
        startedAt,
        now: Date.now(),
        mcp: mcp.status(),
      }),
  });
  const guardApi = requireToken(() => token.token, dataDir);
  // Its own long-lived token, never the console's; the Host/Origin checks below apply to it as to /api.
  // The MCP SDK (and its schemas) load with the first MCP request: a console whose agent never calls out
  // never holds them.
  const mcpRoute = once(async () => {
    const [{ mcpHandler }, { A2ACalls }] = await Promise.all([
      import('../mcp/mcp-handler.js'),
      import('../mcp/a2a-outbound.js'),
    ]);
    return mcpHandler({
      token: () => mcp.token.token,
      calls: app.outbound,
      a2a: new A2ACalls({ frame: app.outbound.frame, credentials }),
      version: AGENT_VERSION,
      tokenFile: mcp.token.path,
      onError,
    });
  });
  const metricsGet = metricsRoute({
    metrics,
    requireToken: guardApi,
    noAuth: () => app.currentSettings.metricsNoAuth,
  });
  const files = staticFiles(options.staticDir ?? DEFAULT_STATIC_DIR);
  koa.use(securityHeaders);
  koa.use(errorsAsJson(onError));
  koa.use(sameOriginOnly(() => port));
  koa.use(async (ctx: Context) => {
    if (ctx.path === '/api' || ctx.path.startsWith('/api/')) return guardApi(ctx, () => api(ctx));
    if (ctx.path === MCP_PATH) return (await mcpRoute())(ctx);
    if (ctx.path === METRICS_PATH) return metricsGet(ctx);
    return files(ctx);
  });

  const server = createServer(
    {
      headersTimeout: CONSOLE_LISTENER.headersTimeoutMs,
      requestTimeout: CONSOLE_LISTENER.requestTimeoutMs,
    },
    koa.callback(),
  );
  server.keepAliveTimeout = CONSOLE_LISTENER.keepAliveTimeoutMs;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    for (const stop of unsubscribe) stop();
    await log.close();
    throw error;
  }
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  const close = async () => {
    for (const stop of unsubscribe) stop();
    events.close();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    await log.close();
    token.forgetUrl(url);
  };
  let file = token.path;
  try {
    token.save(url);
    file = mcp.token.path;
    mcp.listening(url, configuredPort);
  } catch (error) {
    await close();
    throw new Error(
      `Cannot write ${file} (${errorCode(error) ?? String(error)}): check the data directory's permissions and free space.`,
      { cause: error },
    );
  }
  const movedFrom = mcp.moved;
  const mcpInfo = { url: mcp.currentUrl, file: mcp.token.path, ...(movedFrom ? { movedFrom } : {}) };
  return {
    url,
    get token() {
      return token.token;
    },
    mcp: mcpInfo,
    close: () => (closing ??= close()),
  };
}

/** `load` run at the first call only; every call gets its result. `loaded` is that result once asked for. */
function once<T>(load: () => Promise<T>): (() => Promise<T>) & { loaded?: Promise<T> } {
  const get = (): Promise<T> => (get.loaded ??= load());
  get.loaded = undefined as Promise<T> | undefined;
  return get;
}

/** app.on with its matching off, so close() can undo every subscription. */
function on<K extends keyof AppEvents>(
  app: AgentBridgeApp,
  name: K,
  listener: (...args: AppEvents[K]) => void,
): () => void {
  // Node's typings cannot narrow their conditional listener type through a generic K; the call is sound.
  app.on(name, listener as never);
  return () => app.off(name, listener as never);
}
