import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import type { TaskStore } from '@a2a-js/sdk/server';
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { CallbackEvent } from '../../src/agent/events.js';
import { createA2ATasks, type A2ATasks, type A2ATasksOptions } from '../../src/a2a/a2a-tasks.js';
import type {
  A2ACaller,
  A2AGate,
  ChatControl,
  ChatCore,
  ChatTurn,
  ChatTurnRequest,
} from '../../src/a2a/chat-core.js';
import { A2AFrontDoor, type A2AFrontDoorOptions } from '../../src/a2a/front-door.js';
import { KeyStore } from '../../src/keys/keystore.js';
import { authFailed, ProtocolError } from '../../src/protocol/index.js';
import { TaskStore as DataDirTasks } from '../../src/state/task-store.js';
import type { TaskState } from '../../src/state/tasks.js';

/**
 * The wire alone: this fake core streams a reply the test chooses, and the fake gate knows two keys (the
 * real app, its caller core and the gateway double: test/integration/a2a-app*.test.ts). Everything else is
 * real: the SDK's request handler and transports, our adapter, a Koa server on an ephemeral loopback port,
 * the SDK's own client.
 */
export const KEYS = { alice: 'a2a_test_alice_key', bob: 'a2a_test_bob_key' } as const;

export interface Turn {
  caller: A2ACaller;
  turn: ChatTurn;
  aborted: boolean;
  /** Whether the front door asked for the reply's pieces (a blocking send does not: nobody sees them). */
  streamed: boolean;
}

/** A gateway stand-in: "hold" waits for `release()` (or an abort) after its first delta; "deaf" ignores aborts. */
export class FakeCore implements ChatCore {
  readonly turns: Turn[] = [];
  private releases: (() => void)[] = [];

  async run(caller: A2ACaller, turn: ChatTurn, control: ChatControl) {
    const record: Turn = { caller, turn, aborted: false, streamed: control.onDelta !== undefined };
    this.turns.push(record);
    control.signal.addEventListener('abort', () => (record.aborted = true), { once: true });
    if (turn.message === 'crash') throw new Error('secret internal detail /home/operator/.openclaw');
    if (turn.message === 'gateway down') {
      throw new ProtocolError('AGENT_UNAVAILABLE', 502, 'The gateway did not answer; try again later.');
    }
    const words = ['Hello', ', ', caller.name, '.'];
    if (turn.message === 'deaf') {
      // A core that does not listen to its signal: answers once released, whatever happened meanwhile.
      await new Promise<void>((resolve) => this.releases.push(resolve));
      return { reply: 'Too late' };
    }
    if (turn.message === 'hold') {
      control.onDelta?.('Holding');
      await new Promise<void>((resolve, reject) => {
        this.releases.push(resolve);
        control.signal.addEventListener('abort', () => reject(control.signal.reason), { once: true });
      });
      for (const word of words) control.onDelta?.(word);
      return { reply: `Holding${words.join('')}` };
    }
    for (const word of words) control.onDelta?.(word);
    return { reply: words.join(''), usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 } };
  }

  /** Lets every held turn go on. */
  release(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

export class FakeGate implements A2AGate {
  readonly admitted: ChatTurnRequest[] = [];

  async authenticate({
    headers,
  }: {
    headers: Record<string, string | string[] | undefined>;
  }): Promise<A2ACaller> {
    const header = headers.authorization;
    const key = typeof header === 'string' ? /^Bearer (\S+)$/.exec(header)?.[1] : undefined;
    if (!key) throw authFailed('This agent needs an A2A key: ask its operator for one.', 'access');
    const name = Object.entries(KEYS).find(([, value]) => value === key)?.[0];
    if (!name) throw authFailed('This A2A key is not valid here.', 'access');
    return { id: `a2a-key:${name}`, name };
  }

  async admit(_caller: A2ACaller, turn: ChatTurnRequest): Promise<void> {
    if (turn.message === 'too often') {
      throw new ProtocolError('RATE_LIMITED', 429, 'Too many messages; wait a moment.', {
        step: 'rate-limit',
        retryAfterSeconds: 7,
      });
    }
    this.admitted.push(turn);
  }

  /** Lets every request through (the real limits: the a2a-push-bounds and a2a-stream-caps tests). */
  async admitRequest(): Promise<void> {}
}

export interface A2AAgent {
  url: string;
  /** What createA2ATasks gave the front door (unless the test passed its own `tasks`). */
  a2a: A2ATasks;
  /** The task state under it (SAMVAD's too). */
  taskState: TaskState;
  door: A2AFrontDoor<A2ACaller>;
  keys: KeyStore;
  core: FakeCore;
  gate: FakeGate;
  /** Every push delivery attempt (the operator's callback log). */
  deliveries: CallbackEvent[];
  dataDir: string;
  close(): Promise<void>;
}

export interface StartOptions extends Partial<A2AFrontDoorOptions<A2ACaller>> {
  tasks?: TaskStore;
  dataDir?: string;
  /** The task state (default: the data dir's, in `dataDir`); a Redis one for replicas. */
  taskState?: TaskState;
  /** With replicas: the Redis connection its task state uses (createA2ATasks' `replicas`). */
  redis?: A2ATasksOptions['replicas'];
  push?: Partial<A2ATasksOptions['push']>;
  cancelWaitMs?: number;
}

/**
 * The front door mounted in a Koa app (as the agent port will), on an ephemeral loopback port, with its
 * tasks in the project's task state as createA2ATasks wires them (tasks unfinished by an earlier agent on
 * the same dir, or a stopped replica, end failed at start).
 */
export async function startA2AAgent(options: StartOptions = {}): Promise<A2AAgent> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'a2a-test-'));
  const keys = KeyStore.open(dataDir, { cardTTLSeconds: 300 });
  const taskState = options.taskState ?? new DataDirTasks(dataDir);
  const deliveries: CallbackEvent[] = [];
  const a2a = createA2ATasks({
    taskState,
    replicas: options.redis,
    retentionMs: () => 24 * 3600_000,
    push: { devHttpPeers: false, onEvent: (event) => deliveries.push(event), ...options.push },
    cancelWaitMs: options.cancelWaitMs,
    onError: options.onError,
  });
  await a2a.recover();
  const core = new FakeCore();
  const gate = new FakeGate();
  let url = '';
  const door = new A2AFrontDoor<A2ACaller>({
    ...a2a.door,
    card: () => ({
      baseUrl: url,
      name: 'Test agent',
      description: 'An OpenClaw agent behind Agent Bridge',
      version: '0.1.0',
      skills: [{ id: 'chat', name: 'Chat', description: 'Talk with the agent' }],
      keylessAllowed: false,
    }),
    signer: () => keys.signer,
    publicKeys: () => keys.publicKeys(),
    cardTTLSeconds: () => 300,
    gate,
    core,
    bodyLimitBytes: () => 64 * 1024,
    sse: { keepAliveMs: 50 },
    onError: () => undefined,
    ...options,
  });
  const app = new Koa();
  app.use(async (ctx) => {
    if (door.owns(ctx.path)) {
      ctx.respond = false;
      return door.handle(ctx.req, ctx.res);
    }
    ctx.status = 404;
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    a2a,
    taskState,
    door,
    keys,
    core,
    gate,
    deliveries,
    dataDir,
    close: async () => {
      door.close();
      core.release();
      a2a.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A fetch that sends the caller's A2A key, through the SDK's own authentication hook. `base`: the fetch under
 * it (appFetch to reach a tunnel's `*.localhost` address).
 */
export function keyFetch(key: string | undefined, base: typeof fetch = fetch): typeof fetch {
  if (!key) return base;
  return createAuthenticatingFetchWithRetry(base, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
}

export type Transport = 'JSONRPC' | 'HTTP+JSON';

export interface ClientOptions {
  /** Hears of every HTTP response: its status and headers, which the SDK's errors do not carry. */
  seen?(response: Response): void;
  /** Where requests go: the card's own address unless this routes them (as a balancer would). */
  route?(url: string): string;
  /** The fetch under it all (appFetch to reach a tunnel's `*.localhost` address). */
  base?: typeof fetch;
}

/** The SDK's ClientFactory with both transports and its v0.3 compatibility on, preferring `transport`. */
export function clientFactory(
  key: string | undefined,
  transport: Transport = 'JSONRPC',
  options: ClientOptions = {},
): ClientFactory {
  const { seen, route, base = fetch } = options;
  const routed: typeof fetch = route
    ? (input, init) => base(typeof input === 'string' ? route(input) : input, init)
    : base;
  const keyed = keyFetch(key, routed);
  const fetchImpl: typeof fetch = seen
    ? async (...args) => {
        const response = await keyed(...args);
        seen(response);
        return response;
      }
    : keyed;
  const legacyCompat = { enabled: true };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
        new RestTransportFactory({ fetchImpl, legacyCompat }),
      ],
      preferredTransports: [transport],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
    }),
  );
}

export function a2aClient(
  url: string,
  key: string | undefined,
  transport: Transport = 'JSONRPC',
  options: ClientOptions = {},
): Promise<Client> {
  return clientFactory(key, transport, options).createFromUrl(url);
}
