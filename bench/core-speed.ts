// How fast each of the two pinned cores runs a fixed piece of work, now. On a shared virtual machine a
// neighbour can slow one core and not the other (this hypervisor reports no steal time), and the anchored
// rows compare a server bound by its own core (ours) with one bound by the load generator's (the echo): a
// slow server core halves our side only, a slow client core the anchor's only. Alternating runs cannot
// cancel that, so the rows say how fast each core was while they ran.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { median } from './stats.js';
import { pinSelf, type PinPlan } from './pinning.js';

export interface CoreSpeeds {
  /** Hashing throughput on the server's core, MB/s. */
  server: number;
  /** The same on the load generator's core. */
  client: number;
}

const BLOCK = Buffer.alloc(64 * 1024, 7);

/** MB/s of SHA-256 over 64 KB blocks on the core this process runs on: the median of five 4 ms tries. */
function hashSpeed(): number {
  const tries: number[] = [];
  for (let t = 0; t < 5; t++) {
    const started = performance.now();
    let bytes = 0;
    while (performance.now() - started < 4) {
      createHash('sha256').update(BLOCK).digest();
      bytes += BLOCK.length;
    }
    tries.push(bytes / 1048576 / ((performance.now() - started) / 1000));
  }
  return median(tries);
}

/** Each core's speed (this process moves to the server's core for its try, then back to the client's). */
export function probeCores(pin: PinPlan): CoreSpeeds {
  try {
    pinSelf(pin.server);
    const server = hashSpeed();
    pinSelf(pin.client);
    return { server, client: hashSpeed() };
  } finally {
    pinSelf(pin.client);
  }
}

/** Each core's speed during a measurement relative to a reference (the bench's start): 1 = as fast. */
export function relativeSpeeds(probes: CoreSpeeds[], reference: CoreSpeeds): CoreSpeeds {
  return {
    server: median(probes.map((p) => p.server)) / reference.server,
    client: median(probes.map((p) => p.client)) / reference.client,
  };
}
