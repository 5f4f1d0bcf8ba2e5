import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { until } from '../helpers/polling.js';

// The operator replaced the console token ("New console token"), then the console window was gone (closed
// for good, or crashed) and opened again from the tray: it must open with the new token, not the one the
// shell was started with (which only shows the token screen now).
vi.mock(
  'electron',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().module,
);

const standin = electronStandin();
const calls = standin.recorder;
let shell: LaunchedShell;

beforeAll(async () => {
  shell = await launchShell({ settings: { port: 0, consolePort: 0, tunnel: 'none' } });
});

afterAll(async () => {
  await shell?.close();
});

it('opens a window made after a new console token with the new token', async () => {
  const tokenUrl = (token: string) => `${shell.console.url}/#token=${encodeURIComponent(token)}`;
  await until(() => calls.of('window.loadURL').length > 0, 5000, 'the first window to load');
  expect(calls.of('window.loadURL')[0]?.args).toEqual([tokenUrl(shell.console.token)]);

  const { token } = await shell.api<{ token: string }>('/api/console/token', { method: 'POST' });
  expect(token).not.toBe(shell.console.token);
  standin.window.destroy();

  const loadsBefore = calls.of('window.loadURL').length;
  standin.tray.click('open-console');
  expect(standin.windows).toHaveLength(2);
  expect(
    calls
      .of('window.loadURL')
      .slice(loadsBefore)
      .map((call) => call.args[0]),
  ).toEqual([tokenUrl(token)]);
});
