import type { Context } from 'koa';
import { AccessError } from '../access/access-control.js';
import type { AgentBridgeApp } from '../app.js';
import { KeyStoreError } from '../keys/keystore.js';
import type {
  AccessChangeResponse,
  AccessResponse,
  GatewayAgentView,
  KeyView,
  McpResponse,
  RegistryRecordView,
  SelfTestResponse,
  StatusResponse,
  TrafficResponse,
} from '../protocol/console-api.js';
import { RegistryError } from '../registry/registry-client.js';
import { checkDeclaredLength, readJson } from './body.js';
import { ConsoleError } from './errors.js';
import type { EventStreams } from './events-stream.js';
import type { McpConsole } from './mcp-console.js';
import type { ConsoleSettings } from './settings-api.js';
import { recordView } from './status.js';
import { parseTrafficQuery } from './traffic-filter.js';
import type { TrafficLog } from './traffic-log.js';

/** Answers of POST routes that console-api.ts does not type yet (proposed for it). */
export interface KeysChangeResponse {
  /** The key the call created (rotate) or retired (revoke). */
  key: KeyView;
  keys: KeyView[];
}
export interface RegisterResponse {
  record: RegistryRecordView;
}
export interface TunnelResponse {
  tunnel: StatusResponse['tunnel'];
}

export interface ApiDeps {
  app: AgentBridgeApp;
  log: TrafficLog;
  events: EventStreams;
  settings: ConsoleSettings;
  mcp: McpConsole;
  status(): StatusResponse;
  tunnel(): StatusResponse['tunnel'];
}

type Handler = (ctx: Context, params: string[]) => unknown;
interface Route {
  method: 'GET' | 'POST' | 'PUT';
  path: RegExp;
  handle: Handler;
}

/** The operator API of DESIGN.md; the handlers only translate HTTP to the app's own methods. */
export function consoleApi(deps: ApiDeps) {
  const { app, log, events, settings, mcp } = deps;
  let selfTest: Promise<SelfTestResponse> | undefined;

  const routes: Route[] = [
    { method: 'GET', path: /^\/api\/status$/, handle: () => deps.status() },
    {
      method: 'GET',
      path: /^\/api\/events$/,
      handle: (ctx) => events.attach(ctx, { lastId: log.lastId }),
    },
    {
      method: 'GET',
      path: /^\/api\/traffic$/,
      handle: (ctx): TrafficResponse => {
        const { filter, limit } = parseTrafficQuery(new URLSearchParams(ctx.querystring));
        return { entries: log.query(filter, limit), total: log.size };
      },
    },
    { method: 'GET', path: /^\/api\/traffic\/export$/, handle: (ctx) => exportTraffic(ctx, log) },
    {
      method: 'POST',
      path: /^\/api\/keys\/rotate$/,
      handle: (): KeysChangeResponse => ({ key: keyAction(() => app.keys.rotate()), keys: app.keys.list() }),
    },
    {
      method: 'POST',
      path: /^\/api\/keys\/([^/]+)\/revoke$/,
      handle: (_ctx, [kid = '']): KeysChangeResponse => ({
        key: keyAction(() => app.keys.revoke(kid)),
        keys: app.keys.list(),
      }),
    },
    { method: 'POST', path: /^\/api\/registry\/register$/, handle: () => register(app) },
    {
      method: 'POST',
      path: /^\/api\/tunnel\/start$/,
      handle: (): TunnelResponse => {
        if (app.currentSettings.tunnel === 'none') {
          throw new ConsoleError(
            409,
            'No tunnel is configured (tunnel: none), so there is nothing to start.',
            'Choose localtunnel or command in Settings > Tunnel; that starts it.',
          );
        }
        app.startTunnel();
        return { tunnel: deps.tunnel() };
      },
    },
    {
      method: 'POST',
      path: /^\/api\/tunnel\/stop$/,
      handle: (): TunnelResponse => {
        app.stopTunnel();
        return { tunnel: deps.tunnel() };
      },
    },
    { method: 'GET', path: /^\/api\/access$/, handle: (): AccessResponse => app.access.view() },
    {
      method: 'POST',
      path: /^\/api\/access\/(approve|deny|revoke)$/,
      handle: async (ctx, [action]): Promise<AccessChangeResponse> => {
        const sender = senderOf(await readJson(ctx));
        const tasks = accessAction(() => {
          if (action === 'approve') return app.access.approve(sender);
          if (action === 'deny') return app.access.deny(sender);
          app.access.revoke(sender);
          return 0;
        });
        return { ...app.access.view(), tasks };
      },
    },
    {
      method: 'POST',
      path: /^\/api\/gateway\/check$/,
      // The operator added the agent (or changed the gateway's config): look again now.
      handle: async (): Promise<{ agent: GatewayAgentView }> => ({ agent: await app.gatewayTarget.reset() }),
    },
    // The MCP token is shown only here and only on request: the status never carries it.
    { method: 'GET', path: /^\/api\/mcp$/, handle: (): McpResponse => mcp.view() },
    {
      method: 'POST',
      path: /^\/api\/mcp\/token$/,
      handle: (): McpResponse => {
        const view = mcp.regenerate();
        events.state('mcp');
        return view;
      },
    },
    { method: 'GET', path: /^\/api\/settings$/, handle: () => settings.view() },
    { method: 'PUT', path: /^\/api\/settings$/, handle: async (ctx) => settings.update(await readJson(ctx)) },
    {
      method: 'POST',
      path: /^\/api\/selftest$/,
      // A self-test costs a gateway run: a second click while one runs shares its answer.
      handle: () => (selfTest ??= app.selfTest().finally(() => (selfTest = undefined))),
    },
  ];

  return async (ctx: Context): Promise<void> => {
    const matching = routes.filter((route) => route.path.test(ctx.path));
    const route = matching.find((candidate) => candidate.method === ctx.method);
    if (!route) {
      if (matching.length === 0) {
        throw new ConsoleError(
          404,
          `No console API at ${ctx.path.slice(0, 200)}.`,
          'See "Operator console API" in DESIGN.md for the paths.',
        );
      }
      const allow = matching.map((candidate) => candidate.method).join(', ');
      throw new ConsoleError(405, `Use ${allow} for ${ctx.path}.`, undefined, undefined, { Allow: allow });
    }
    checkDeclaredLength(ctx);
    const params = (route.path.exec(ctx.path) ?? []).slice(1).map(decodePart);
    const body = await route.handle(ctx, params);
    if (ctx.respond === false || body === undefined) return;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };
}

function keyAction(action: () => KeyView): KeyView {
  try {
    return action();
  } catch (error) {
    if (!(error instanceof KeyStoreError)) throw error;
    if (error.code === 'unknown-kid') {
      throw new ConsoleError(
        404,
        error.message,
        'Pick a kid from the Keys page (GET /api/status lists them).',
      );
    }
    // Keystore messages say what to do and never contain key material: safe to pass on.
    throw new ConsoleError(500, error.message);
  }
}

async function register(app: AgentBridgeApp): Promise<RegisterResponse> {
  if (app.registrar.current.status === 'registering') {
    throw new ConsoleError(
      409,
      'A registration is already running.',
      'Wait for it to finish, then look again.',
    );
  }
  try {
    return { record: recordView(await app.register()) };
  } catch (error) {
    // The registry (or the path to it) failed, not the console: 502, with the registrar's own fix.
    if (error instanceof RegistryError) throw new ConsoleError(502, error.message, error.fix);
    throw error;
  }
}

function exportTraffic(ctx: Context, log: TrafficLog): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  ctx.type = 'application/x-ndjson';
  ctx.set('Content-Disposition', `attachment; filename="agent-bridge-traffic-${stamp}.jsonl"`);
  return log
    .all()
    .map((entry) => `${JSON.stringify(entry)}\n`)
    .join('');
}

function senderOf(body: unknown): string {
  const sender = (body as { sender?: unknown } | null)?.sender;
  if (typeof sender !== 'string') {
    throw new ConsoleError(400, 'The body must name the sender.', 'Send {"sender": "agent://..."}.');
  }
  return sender;
}

function accessAction(action: () => number): number {
  try {
    return action();
  } catch (error) {
    if (error instanceof AccessError) throw new ConsoleError(error.status, error.message, error.fix);
    throw error;
  }
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ConsoleError(400, 'The path is not valid URL encoding.');
  }
}
