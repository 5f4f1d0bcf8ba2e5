// Issue 16, item 6: the data-dir nonce window is most of what 100,000 calls leave in memory (it held about
// 117 bytes a pair in a Map of strings). What it holds per pair, measured on the heap and in array buffers
// after a full GC, through the same check() the pipeline calls.
import { rmSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, expect, it } from 'vitest';
import { LocalCallLimits } from '../../src/state/call-limits.js';
import { tempDir } from '../helpers/agents.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const held = () => {
  // Twice: an array buffer dropped in one collection is released in the next.
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

it('remembers 100,000 nonces in under 40 bytes a pair', () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const limits = new LocalCallLimits(dataDir, { perMinute: 1_000_000, perSender: 1_000_000 });
  const pairs = 100_000;
  const before = held();
  const nonceExpiresAt = Date.now() + 360_000;
  for (let i = 0; i < pairs; i++) {
    // Nonces as clients make them (a UUID's length), from a few senders.
    const nonce = `${i.toString(16).padStart(8, '0')}-7f3a-4c1e-9b2d-5e8f0a1b2c3d`;
    const verdict = limits.check({
      sender: `agent://peer${i % 4}.example`,
      nonce,
      nonceExpiresAt,
      tokensPerDay: 0,
    });
    if (!verdict.ok) throw new Error(`call ${i} refused: ${verdict.refusal}`);
  }
  const perPair = (held() - before) / pairs;
  expect(limits.nonces.size).toBe(pairs);
  expect(perPair, `${perPair.toFixed(1)} bytes a pair`).toBeLessThan(40);
  limits.close();
}, 60_000);
