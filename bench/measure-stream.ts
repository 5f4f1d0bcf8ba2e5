// 4. Stream latency: the time from the gateway writing a delta to the caller reading the matching
// `data: {"chunk":...}` block. Each delta's text is its send time on the machine's monotonic clock (see
// instant-gateway.ts), which the caller compares with the same clock when it reads the block.
import http from 'node:http';
import type { PreparedRequest } from './load.js';
import { a2aMessage, signedChat } from './requests.js';
import type { BenchEnv } from './setup.js';
import { Samples, summarize, type LatencySummary } from './stats.js';

export interface StreamOptions {
  streams: number;
  deltas: number;
  /** Pause between deltas at the gateway, ms. */
  intervalMs: number;
  warmupStreams: number;
}

export interface StreamResult extends LatencySummary {
  streams: number;
  expectedDeltas: number;
  /** Streams that ended with the signed final `done` event carrying a result. */
  completed: number;
}

/** What one SSE `data:` block carries: delta send stamps (`;`-separated), or the end of a good stream. */
type ReadBlock = (data: unknown) => { stamps?: string; done?: boolean };

/** SAMVAD: `{"chunk": ...}` per delta, then the signed final `{"done": true, "result": ...}`. */
const samvadBlock: ReadBlock = (data) => {
  const block = data as { chunk?: unknown; done?: unknown; result?: unknown };
  if (typeof block.chunk === 'string') return { stamps: block.chunk };
  return { done: block.done === true && block.result !== undefined };
};

/** A2A: a JSON-RPC result per event; each delta an artifact update, the end a completed status update. */
const a2aBlock: ReadBlock = (data) => {
  const result = (data as { result?: Record<string, unknown> }).result ?? {};
  const artifact = result.artifactUpdate as
    { lastChunk?: boolean; artifact?: { parts?: { text?: string }[] } } | undefined;
  // Every piece but the last chunk, which repeats the whole text (the first piece creates the artifact).
  if (artifact && !artifact.lastChunk) {
    return { stamps: (artifact.artifact?.parts ?? []).map((p) => p.text ?? '').join('') };
  }
  const status = result.statusUpdate as { status?: { state?: string } } | undefined;
  return { done: status?.status?.state === 'TASK_STATE_COMPLETED' };
};

export async function measureStream(env: BenchEnv, options: StreamOptions): Promise<StreamResult> {
  const message = `stream:${options.deltas}:${options.intervalMs}`;
  return streamRuns(env, options, signedChat(env.caller, env.agent.id, 'stream', message), samvadBlock);
}

/** 4a. The same streams asked for over A2A (`SendStreamingMessage`, JSON-RPC), delta to caller. */
export async function measureA2AStream(env: BenchEnv, options: StreamOptions): Promise<StreamResult> {
  const message = `stream:${options.deltas}:${options.intervalMs}`;
  return streamRuns(env, options, a2aMessage(env.agent.a2aKey, 'SendStreamingMessage', message), a2aBlock);
}

async function streamRuns(
  env: BenchEnv,
  options: StreamOptions,
  prepare: () => PreparedRequest,
  read: ReadBlock,
): Promise<StreamResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const delays = new Samples();
  let completed = 0;
  try {
    for (let i = 0; i < options.warmupStreams; i++)
      await readStream(env.agent.url, prepare(), agent, new Samples(), read);
    for (let i = 0; i < options.streams; i++) {
      if (await readStream(env.agent.url, prepare(), agent, delays, read)) completed++;
    }
  } finally {
    agent.destroy();
  }
  return {
    ...summarize(delays.values()),
    streams: options.streams,
    expectedDeltas: options.streams * options.deltas,
    completed,
  };
}

/** Reads one stream; records each delta's delay; true when it ended with a result. */
function readStream(
  url: string,
  request: PreparedRequest,
  agent: http.Agent,
  delays: Samples,
  read: ReadBlock,
): Promise<boolean> {
  const target = new URL(request.path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      target,
      {
        method: 'POST',
        agent,
        headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body) },
      },
      (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            reject(
              new Error(
                `stream refused (HTTP ${res.statusCode}): ${Buffer.concat(chunks).toString().slice(0, 200)}`,
              ),
            ),
          );
          return;
        }
        let pending = '';
        let done = false;
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          const now = process.hrtime.bigint();
          pending += text;
          const blocks = pending.split('\n\n');
          pending = blocks.pop() ?? '';
          for (const block of blocks) {
            // The SDK's shape: a block that is one `data:` line; named events (event: ...) are skipped.
            if (!block.startsWith('data: ') || block.includes('\n')) continue;
            const { stamps, done: ended } = read(JSON.parse(block.slice(6)));
            for (const stamp of stamps?.split(';') ?? []) {
              if (stamp) delays.push(Number(now - BigInt(stamp)) / 1e6);
            }
            if (ended) done = true;
          }
        });
        res.on('end', () => resolve(done));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}
