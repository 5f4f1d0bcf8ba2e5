// `npm run serve` starts the core with the Node options the bench's agent runs with (bench/setup.ts reads
// them from the script): no source maps held in memory, the young generation capped (docs/server.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { serveNodeFlags } from '../../bench/setup.js';

describe('npm run serve', () => {
  it('runs the built core with the young generation capped and no source maps held', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.serve).toMatch(/&& node --max-semi-space-size=8 dist\/core\/cli\.js serve$/);
    expect(serveNodeFlags()).toEqual(['--max-semi-space-size=8']);
  });
});
