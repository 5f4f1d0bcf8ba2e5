import type { Router } from '@koa/router';
import type { AgentBridgeApp } from '../app.js';
import type {
  KeyView,
  RegistryRecordView,
  SelfTestResponse,
  StatusResponse,
} from '../protocol/console-api.js';
import type { ApiDeps } from './api-deps.js';
import { ConsoleError } from './errors.js';
import { reply } from './reply.js';
import { a2aStatus, recordView } from './status.js';

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

/** The agent itself: its status, keys, registration, tunnel and self-test. */
export function agentRoutes(router: Router, deps: ApiDeps): void {
  const { app } = deps;
  let selfTest: Promise<SelfTestResponse> | undefined;

  router.get(
    '/api/status',
    reply(async (): Promise<StatusResponse> => {
      const status = deps.status();
      return { ...status, a2a: await a2aStatus(app) };
    }),
  );
  // Keystore failures (an unknown kid: 404) are answered by error-reply.ts.
  router.post(
    '/api/keys/rotate',
    reply((): KeysChangeResponse => ({ key: app.keys.rotate(), keys: app.keys.list() })),
  );
  router.post(
    '/api/keys/:kid/revoke',
    reply((ctx): KeysChangeResponse => ({
      key: app.keys.revoke(ctx.params.kid ?? ''),
      keys: app.keys.list(),
    })),
  );
  router.post(
    '/api/registry/register',
    reply(() => register(app)),
  );
  router.post(
    '/api/tunnel/start',
    reply((): TunnelResponse => {
      if (app.currentSettings.tunnel === 'none') {
        throw new ConsoleError(
          409,
          'No tunnel is configured (tunnel: none), so there is nothing to start.',
          'Choose localtunnel or command in Settings > Tunnel; that starts it.',
        );
      }
      app.publicAddress.startTunnel();
      return { tunnel: deps.tunnel() };
    }),
  );
  router.post(
    '/api/tunnel/stop',
    reply((): TunnelResponse => {
      app.publicAddress.stopTunnel();
      return { tunnel: deps.tunnel() };
    }),
  );
  // The operator has seen that the address (the agent's id) changed: the Overview stops showing it.
  router.post(
    '/api/tunnel/address-change/dismiss',
    reply((): TunnelResponse => {
      app.publicAddress.memory.dismiss();
      deps.events.state('tunnel');
      return { tunnel: deps.tunnel() };
    }),
  );
  // A self-test costs a gateway run: a second click while one runs shares its answer.
  router.post(
    '/api/selftest',
    reply(() => (selfTest ??= app.selfTest().finally(() => (selfTest = undefined)))),
  );
}

/** Registry failures (502 with the registrar's fix) are answered by error-reply.ts. */
async function register(app: AgentBridgeApp): Promise<RegisterResponse> {
  if (app.registrar.current.status === 'registering') {
    throw new ConsoleError(
      409,
      'A registration is already running.',
      'Wait for it to finish, then look again.',
    );
  }
  return { record: recordView(await app.register()) };
}
