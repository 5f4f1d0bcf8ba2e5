import { defineConfig } from 'vitest/config';

// `npm run test:openclaw`: the opt-in test against a real OpenClaw gateway (the default config excludes
// test/openclaw/**). One file, one gateway, in one worker; a gateway start takes about 10 s here.
export default defineConfig({
  test: {
    include: ['test/openclaw/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
  },
});
