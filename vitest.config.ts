import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Two files at a time on CI's two cores (Vitest's default there is one): the suite takes about 9 minutes
    // instead of 15. Each file takes its own ephemeral ports and temp data dirs, so two run side by side.
    maxWorkers: 2,
    // The operator's default ports are taken for the whole run: no test may listen on them.
    globalSetup: ['test/operator-ports.ts'],
    // Node for the core and its servers; a DOM (happy-dom) for the renderer's component tests.
    projects: [
      {
        extends: true,
        // test/openclaw/** runs a real OpenClaw gateway: opt-in, through `npm run test:openclaw`.
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'test/openclaw/**'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: { name: 'renderer', include: ['test/renderer/**/*.test.tsx'], environment: 'happy-dom' },
      },
    ],
  },
});
