// What the bench process and a server child (bench/server-child.ts) say to each other over IPC.
import type { TunnelState } from '../src/tunnel/state.js';
import type { LatencySummary } from './stats.js';

export type ChildConfig =
  /**
   * With `tunnelHost`, the agent opens a localtunnel there and reports ready once it is online. With
   * `console`, it also starts the operator console (src/console) on a free loopback port, as `serve` does.
   */
  | {
      role: 'agent';
      gatewayUrl: string;
      gatewayToken: string;
      /** Senders the operator approved (the agent runs the default access policy, `pairing`). */
      approved: string[];
      tunnelHost?: string;
      console?: boolean;
      /** Shared state on this Redis (as replicas run), instead of the data dir. */
      redisUrl?: string;
    }
  /** The SAMVAD anchor: a plain node:http JSON echo (bench/echo-server.ts). */
  | { role: 'echo' }
  /** The A2A anchor: the minimal server on the A2A SDK (bench/sdk-a2a-server.ts), on the same gateway. */
  | { role: 'sdk-a2a'; gatewayUrl: string; gatewayToken: string }
  | { role: 'gateway'; token: string }
  /** The loopback localtunnel-protocol server (test/fixtures/tunnel-server.ts). */
  | { role: 'tunnel'; maxConnCount: number }
  /** Nothing but node: what the runtime alone costs in memory. */
  | { role: 'idle' };

/** The operator console of an agent child: `http://127.0.0.1:PORT` and its API token. */
export interface ConsoleRef {
  url: string;
  token: string;
}

export type ChildCommand =
  | { cmd: 'memory' }
  | { cmd: 'gc' }
  /** Starts the peak (VmHWM) again from the current rss (Linux: `/proc/self/clear_refs`), then reports. */
  | { cmd: 'reset-peak' }
  | { cmd: 'sample' }
  | { cmd: 'sweep'; advanceMs: number }
  /** Tunnel server only: stop it (like the server dying) or start it again on the same port. */
  | { cmd: 'tunnel-stop' }
  | { cmd: 'tunnel-start' }
  | { cmd: 'stop' };

export interface ChildMemory {
  rss: number;
  heapUsed: number;
  /** Array buffers outside the heap (the nonce store's table is one). */
  arrayBuffers: number;
  /** Peak resident set (VmHWM from /proc/self/status); undefined where /proc is not available. */
  peakRss?: number;
  /** Resident anonymous memory (RssAnon): rss without mapped files such as the node binary. */
  anonRss?: number;
  /** The agent's nonce store: remembered (sender, nonce) pairs and the size of its append-only log. */
  nonces?: number;
  nonceLogBytes?: number;
}

/** What the child did since the previous sample. */
export interface ChildSample {
  /** CPU time of the whole process (all threads), microseconds. */
  userUs: number;
  systemUs: number;
  /** Time the main thread spent in garbage collection pauses, microseconds (helper threads not included). */
  gcUs: number;
  /** Agent only: `durationMs` of each accepted envelope (from handleEnvelope's start to the reply). */
  handled?: LatencySummary;
}

/** `process.hrtime.bigint()` as a decimal string: the monotonic clock every process on the machine shares. */
export type HrtimeNs = string;

export type ChildMessage =
  | {
      type: 'ready';
      url: string;
      /** The agent's card id as it is now: the public one when its tunnel is online. */
      id?: string;
      /** An agent: the A2A key issued to the bench's A2A caller. */
      a2aKey?: string;
      pid: number;
      /** A tunnelled agent: its public URL once online (absent if it did not come online in time). */
      publicUrl?: string;
      tunnel?: TunnelState;
      /** An agent started with `console`: where its operator console listens, and the launch's token. */
      console?: ConsoleRef;
    }
  | {
      type: 'reply';
      seq: number;
      memory?: ChildMemory;
      sample?: ChildSample;
      error?: string;
      /** tunnel-stop / tunnel-start: when the call began and when it returned. */
      calledAt?: HrtimeNs;
      doneAt?: HrtimeNs;
    }
  /** A tunnelled agent: every change of its tunnel state, stamped in the child as it happened. */
  | { type: 'tunnel'; state: TunnelState; at: HrtimeNs; wallMs: number };

export type ChildRequest = ChildCommand & { seq: number };
