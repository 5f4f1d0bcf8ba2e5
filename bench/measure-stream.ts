// 4. Stream latency: the time from the gateway writing a delta to the caller reading the matching
// `data: {"chunk":...}` block. Each delta's text is its send time on the machine's monotonic clock (see
// instant-gateway.ts), which the caller compares with the same clock when it reads the block.
import http from 'node:http';
import type { PreparedRequest } from './load.js';
import { signedChat } from './requests.js';
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

export async function measureStream(env: BenchEnv, options: StreamOptions): Promise<StreamResult> {
  const prepare = signedChat(
    env.caller,
    env.agent.id,
    'stream',
    `stream:${options.deltas}:${options.intervalMs}`,
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const delays = new Samples();
  let completed = 0;
  try {
    for (let i = 0; i < options.warmupStreams; i++)
      await readStream(env.agent.url, prepare(), agent, new Samples());
    for (let i = 0; i < options.streams; i++) {
      if (await readStream(env.agent.url, prepare(), agent, delays)) completed++;
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
            const data = JSON.parse(block.slice(6)) as { chunk?: string; done?: boolean; result?: unknown };
            if (typeof data.chunk === 'string') {
              for (const stamp of data.chunk.split(';')) {
                if (stamp) delays.push(Number(now - BigInt(stamp)) / 1e6);
              }
            } else if (data.done === true && data.result !== undefined) {
              done = true;
            }
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
