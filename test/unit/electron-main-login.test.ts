import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

// electron/main.ts started at login (not the first run): it stays in the tray with no window until the
// operator clicks the new-sender notification, which must open the window with its token and then the
// Access page (loading `#/access` first would lose the token: see decisions/window-options.ts).
vi.mock(
  'electron',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().module,
);

const standin = electronStandin();
const calls = standin.recorder;
let gateway: GatewayDouble;
let peer: TestAgent | undefined;
let shell: LaunchedShell;

beforeAll(async () => {
  gateway = await startGatewayDouble();
  shell = await launchShell({
    settings: {
      port: 0,
      consolePort: 0,
      tunnel: 'none',
      gatewayUrl: gateway.url,
      gatewayToken: gateway.token,
      devHttpPeers: true,
    },
    standin: { wasOpenedAtLogin: true },
    notFirstRun: true,
  });
});

afterAll(async () => {
  try {
    await shell?.close();
  } finally {
    await peer?.close();
    await gateway?.close();
  }
});

it('opens no window at login; a click on the new-sender notice opens it with its token, then on Access', async () => {
  await until(() => calls.of('tray.setImage').length > 0, 5000, 'the first tray update');
  expect(standin.windows).toEqual([]);

  peer = await startAgent();
  const { agent } = await shell.status();
  const reply = await post(
    agent.localUrl,
    PATHS.sync,
    sign(envelope(peer.id, agent.id, 'sync', { message: 'hello' }), peer.app.keys.signer),
  );
  expect(reply.status, reply.text).toBe(403);
  const peerId = peer.id;
  await until(
    () => standin.notifications.some((n) => n.shown && n.options.body.includes(peerId)),
    5000,
    'the new-sender notification',
  );
  expect(standin.windows).toEqual([]);

  // What the window showed at each load: the page must wait until the renderer erased `#token=`.
  const shownAtLoad: string[] = [];
  calls.onCall('window.loadURL', () => shownAtLoad.push(standin.window.webContents.getURL()));
  standin.notifications.find((n) => n.options.body.includes(peerId))!.click();
  expect(standin.windows).toHaveLength(1);
  const { url, token } = shell.console;
  await until(() => calls.of('window.loadURL').length === 2, 5000, 'the Access page after the token');
  expect(calls.of('window.loadURL').map((call) => call.args[0])).toEqual([
    `${url}/#token=${encodeURIComponent(token)}`,
    `${url}/#/access`,
  ]);
  expect(shownAtLoad).toEqual(['', `${url}/`]);
  expect(standin.window.visible).toBe(true);
});
