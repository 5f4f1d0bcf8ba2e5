import { existsSync, readdirSync, rmSync } from 'node:fs';
import { afterAll, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { routeDependenciesToStandin } from '../fixtures/electron-standin/register.js';
import { tempDir } from '../helpers/agents.js';

// A second launch while another instance holds the lock: electron/main.ts quits before it starts anything.
// (Its own file: main.ts runs on import, once per module registry.)
vi.mock(
  'electron',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().module,
);

const standin = electronStandin();
const userData = tempDir('agent-bridge-electron-second-');

afterAll(() => rmSync(userData, { recursive: true, force: true }));

it('quits at once when another instance holds the lock, starting no core, tray or window', async () => {
  standin.configure({ userData, singleInstanceLock: false });
  routeDependenciesToStandin();
  await import('../../electron/main.js');
  // Anything main() would do happens after `await app.whenReady()`: give it the chance to go wrong.
  await new Promise((resolve) => setTimeout(resolve, 200));

  const apis = standin.recorder.calls.map((call) => call.api);
  expect(apis.slice(0, 2)).toEqual(['app.requestSingleInstanceLock', 'app.quit']);
  expect(standin.app.quitted).toBe(true);
  for (const api of ['app.whenReady', 'app.getPath', 'Tray.constructor', 'BrowserWindow.constructor'])
    expect(apis, api).not.toContain(api);
  expect(existsSync(userData) && readdirSync(userData)).toEqual([]);
});
