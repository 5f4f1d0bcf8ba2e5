import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { _electron as electron } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { StatusResponse } from '../../src/protocol/console-api.js';
import { until } from '../helpers/polling.js';

// The smoke test of an installer's app, run by the release workflow on each platform's runner before it
// publishes anything (.github/workflows/release.yml): the packaged app itself, as the operator starts it,
// in a fresh data folder. No Electron binary can be downloaded on the machines this project is built on,
// so here it says plainly that it skipped.
const packaged = process.env.AGENT_BRIDGE_PACKAGED_APP;
if (!packaged) {
  console.warn(
    'SKIPPED: the packaged-app smoke test needs a packaged app (an Electron binary inside it): set ' +
      'AGENT_BRIDGE_PACKAGED_APP to its executable, e.g. release/linux-unpacked/agent-bridge after ' +
      '`npm run package` on a desktop. The release workflow sets it on each platform.',
  );
}

describe.skipIf(!packaged)('the packaged app', () => {
  it('carries its update feed, starts in a fresh data folder, answers its health, opens the console with its token, shows its tray and quits cleanly', async () => {
    const executable = resolve(packaged!);
    expect(existsSync(executable), `no packaged app at ${executable}`).toBe(true);
    // Where installed apps look for updates: electron-builder writes it from electron-builder.yml's publish.
    const resources =
      process.platform === 'darwin'
        ? resolve(executable, '../../Resources')
        : join(dirname(executable), 'resources');
    const feed = yaml.load(readFileSync(join(resources, 'app-update.yml'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(feed).toMatchObject({ provider: 'github', owner: expect.any(String), repo: expect.any(String) });

    const dataDir = mkdtempSync(join(tmpdir(), 'agent-bridge-packaged-'));
    // Free ports, no tunnel and no update check: the smoke test is about the app, not this runner's network
    // (test/integration/update-feed.test.ts runs the updater against a feed double).
    writeFileSync(
      join(dataDir, 'settings.json'),
      JSON.stringify({ port: 0, consolePort: 0, tunnel: 'none', autoUpdate: false }),
    );
    const app = await electron.launch({
      executablePath: executable,
      // Linux runners have no setuid sandbox helper for an unpacked app (the deb's installer sets one up).
      args: process.platform === 'linux' ? ['--no-sandbox'] : [],
      env: { ...process.env, AGENT_BRIDGE_DATA_DIR: dataDir, ELECTRON_ENABLE_LOGGING: '1' },
      timeout: 60_000,
    });
    try {
      // The core: console.json written, then the agent's own health endpoint.
      const consoleFile = join(dataDir, 'console.json');
      await until(() => existsSync(consoleFile), 60_000, 'the core to write console.json');
      const consoleInfo = JSON.parse(readFileSync(consoleFile, 'utf8')) as { url: string; token: string };
      const status = (await (
        await fetch(`${consoleInfo.url}/api/status`, {
          headers: { authorization: `Bearer ${consoleInfo.token}` },
        })
      ).json()) as StatusResponse;
      const health = await fetch(`${status.agent.localUrl}/agent/health`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { status?: string }).status).toBeDefined();

      // The first run opens the console in the window, which takes its token and goes live.
      const window = await app.firstWindow({ timeout: 30_000 });
      await window.getByTestId('connection-state').waitFor({ timeout: 30_000 });
      await until(
        async () => (await window.getByTestId('connection-state').getAttribute('data-state')) === 'live',
        30_000,
        'the console to go live',
      );
      expect(await window.getByTestId('token-screen').count()).toBe(0);
      expect(new URL(window.url()).origin).toBe(new URL(consoleInfo.url).origin);
      expect(window.url()).not.toContain('token=');
      expect(await window.title()).toMatch(/Agent Bridge/);

      // The tray, as electron/main.ts keeps it for this test (Electron has no API that lists trays).
      const tray = await app.evaluate(() => {
        const held = (globalThis as Record<symbol, { isDestroyed(): boolean } | undefined>)[
          Symbol.for('agent-bridge.tray')
        ];
        return held ? { destroyed: held.isDestroyed() } : undefined;
      });
      expect(tray).toEqual({ destroyed: false });

      // Quit as the tray's Quit does: the agent stops first, the process ends with 0.
      const exited = new Promise<number | null>((done) => app.process().once('exit', (code) => done(code)));
      // The reply may not come back once the app goes: the exit code says how it went.
      await app.evaluate(({ app: electronApp }) => electronApp.quit()).catch(() => undefined);
      expect(await exited).toBe(0);
      expect(existsSync(consoleFile)).toBe(false);
      await expect(fetch(`${status.agent.localUrl}/agent/health`)).rejects.toThrow();
    } finally {
      await app.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
