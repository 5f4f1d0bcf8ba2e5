// What the bench process and a server child (bench/server-child.ts) say to each other over IPC.
import type { LatencySummary } from './stats.js';

export type ChildConfig =
  | { role: 'agent'; gatewayUrl: string; gatewayToken: string }
  | { role: 'echo' }
  | { role: 'gateway'; token: string }
  /** Nothing but node: what the runtime alone costs in memory. */
  | { role: 'idle' };

export type ChildCommand =
  | { cmd: 'memory' }
  | { cmd: 'gc' }
  | { cmd: 'sample' }
  | { cmd: 'sweep'; advanceMs: number }
  | { cmd: 'stop' };

export interface ChildMemory {
  rss: number;
  heapUsed: number;
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
  /** Agent only: `durationMs` of each accepted envelope (from handleEnvelope's start to the reply). */
  handled?: LatencySummary;
}

export type ChildMessage =
  | { type: 'ready'; url: string; id?: string; pid: number }
  | { type: 'reply'; seq: number; memory?: ChildMemory; sample?: ChildSample; error?: string };

export type ChildRequest = ChildCommand & { seq: number };
