import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { electronStandin } from '../fixtures/electron-standin/index.js';
import { launchShell, type LaunchedShell } from '../fixtures/electron-standin/launch.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { PATHS, envelope, post, sign } from '../helpers/envelopes.js';
import { until } from '../helpers/polling.js';

// electron/main.ts as the desktop app runs it, on its first run, against a recording stand-in for `electron`
// (no Electron binary can be downloaded here): the real core, console, settings store (electron-store) and
// a gateway double. The shell's own files get the stand-in through vi.mock; electron-store, which Node loads
// itself, through module hooks (test/fixtures/electron-standin/register.ts).
vi.mock(
  'electron',
  async () => (await import('../fixtures/electron-standin/index.js')).electronStandin().module,
);

const standin = electronStandin();
const calls = standin.recorder;
let gateway: GatewayDouble;
let peer: TestAgent | undefined;
let shell: LaunchedShell;

const iconOf = (path: unknown) => String(path).split('/').at(-1);
const titles = () => standin.notifications.filter((n) => n.shown).map((n) => n.options.title);

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  gateway = await startGatewayDouble();
  shell = await launchShell({
    settings: {
      port: 0,
      consolePort: 0,
      tunnel: 'none',
      gatewayUrl: gateway.url,
      gatewayToken: gateway.token,
      // The peer below is a loopback agent: its card is fetched over plain http.
      devHttpPeers: true,
    },
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

describe('electron/main.ts against the electron stand-in (first run)', () => {
  it('asks for the single-instance lock first, then starts the core with the settings in the data dir', async () => {
    expect(calls.calls[0]?.api).toBe('app.requestSingleInstanceLock');
    const order = ['app.setName', 'app.whenReady', 'app.getPath'].map((api) => calls.indexOf(api));
    expect(order.every((index, i) => index > (i === 0 ? 0 : order[i - 1]!))).toBe(true);
    expect(calls.of('app.getPath')[0]?.args).toEqual(['userData']);
    // The real electron-store ran against the stand-in (it registers its renderer handler) and read the
    // same settings.json the headless core uses: the gateway double and ephemeral ports come from it.
    expect(calls.of('ipcMain.on').map((call) => call.args[0])).toContain('electron-store-get-data');
    const { agent, gateway: gatewayView } = await shell.status();
    expect(gatewayView.url).toBe(gateway.url);
    expect(readdirSync(shell.userData)).not.toContain('config.json');
    expect(new URL(agent.localUrl).port).not.toBe('8787');
    // The agent answers its card at its local URL.
    const card = (await (await fetch(`${agent.localUrl}/.well-known/agent.json`)).json()) as { id: string };
    expect(card.id).toBe(agent.id);
    expect(calls.of('dialog.showErrorBox')).toEqual([]);
  });

  it('opens the console window with its token on the first run, sandboxed', async () => {
    await until(() => calls.of('window.loadURL').length > 0, 5000, 'the window to load the console');
    expect(standin.windows).toHaveLength(1);
    expect(calls.of('window.loadURL')[0]?.args).toEqual([
      `${shell.console.url}/#token=${encodeURIComponent(shell.console.token)}`,
    ]);
    expect(standin.window.options).toMatchObject({
      show: false,
      webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false },
    });
    await until(() => standin.window.visible, 5000, 'ready-to-show to show the window');
    expect(existsSync(join(shell.userData, '.first-run-done'))).toBe(true);
    // The renderer took the token off the address bar (as the real one does).
    await until(
      () => standin.window.webContents.getURL() === `${shell.console.url}/`,
      5000,
      'the token taken',
    );
  });

  it('keeps the agent running when the window is closed, and shows it again for a second launch', () => {
    const window = standin.window;
    window.close();
    expect(window.destroyed).toBe(false);
    expect(window.visible).toBe(false);
    standin.app.emit('second-instance', {}, ['agent-bridge'], shell.userData);
    expect(window.visible).toBe(true);
    expect(calls.lastIndexOf('window.focus')).toBeGreaterThan(calls.lastIndexOf('window.close'));
    expect(standin.windows).toHaveLength(1);
    // Links out of the console go to the browser, and only over https; the console's own pages stay.
    expect(window.webContents.navigateFromPage('https://github.com/')).toBe(false);
    expect(window.webContents.navigateFromPage('file:///etc/passwd')).toBe(false);
    expect(calls.of('shell.openExternal').map((call) => call.args[0])).toEqual(['https://github.com/']);
    expect(window.webContents.navigateFromPage(`${shell.console.url}/#/traffic`)).toBe(true);
    expect(window.webContents.windowOpenHandler?.({ url: 'https://example.com/' })).toEqual({
      action: 'deny',
    });
    const granted = vi.fn();
    window.webContents.permissionHandler?.({}, 'media', granted);
    expect(granted).toHaveBeenCalledWith(false);
  });

  it('notifies a new sender held for approval, and a click opens the Access page', async () => {
    peer = await startAgent();
    const { agent } = await shell.status();
    const call = envelope(peer.id, agent.id, 'sync', { message: 'Hello, may I talk to your agent?' });
    const reply = await post(agent.localUrl, PATHS.sync, sign(call, peer.app.keys.signer));
    // The default access policy (`pairing`) holds a verified sender the operator has not approved.
    expect(reply.status, reply.text).toBe(403);
    expect(gateway.requests.filter((request) => request.path === '/v1/chat/completions')).toEqual([]);

    const peerId = peer.id;
    await until(
      () => standin.notifications.some((n) => n.shown && n.options.body.includes(peerId)),
      5000,
      'a notification naming the sender',
    );
    const notification = standin.notifications.find((n) => n.options.body.includes(peerId))!;
    const { access } = await shell.status();
    expect(access).toMatchObject({ policy: 'pairing', pending: 1, newest: { sender: peerId } });
    expect(notification.options.title).toBe('New sender asks to talk to your agent');
    expect(notification.options.body).toContain(`code ${access.newest!.code}`);
    expect(notification.options.body).toMatch(/Access page/);

    // The tray says so too.
    await until(() => standin.tray.item('access').visible === true, 5000, 'the tray to show the sender');
    expect(standin.tray.item('access').label).toBe('1 sender waiting for approval…');

    standin.window.hide();
    const loadsBefore = calls.of('window.loadURL').length;
    notification.click();
    expect(standin.window.visible).toBe(true);
    // The console is loaded and holds its token: a same-document navigation to the page.
    expect(
      calls
        .of('window.loadURL')
        .slice(loadsBefore)
        .map((c) => c.args[0]),
    ).toEqual([`${shell.console.url}/#/access`]);
    expect(standin.windows).toHaveLength(1);
  });

  it('turns the tray icon with the state: degraded while the gateway does not answer, back after', async () => {
    const icon = () => iconOf(calls.of('tray.setImage').at(-1)?.args[0]);
    expect(iconOf(calls.of('Tray.constructor')[0]?.args[0])).toBe('tray-offline.png');
    await until(() => calls.of('tray.setImage').length > 0, 5000, 'the first tray update');
    // Gateway live, no tunnel: reachable on this machine only.
    expect(icon()).toBe('tray-offline.png');
    expect(standin.tray.tooltip).toMatch(/this machine only/);
    expect(calls.of('nativeImage.createFromPath').map((c) => iconOf(c.args[0]))).toContain(
      'tray-offline@2x.png',
    );

    const deadUrl = `http://127.0.0.1:${await closedPort()}`;
    // Another address: the console asks for the token again (it is never sent to a new address unasked).
    await shell.api('/api/settings', {
      method: 'PUT',
      body: { gatewayUrl: deadUrl, gatewayToken: gateway.token },
    });
    await until(() => icon() === 'tray-degraded.png', 10_000, 'the degraded icon');
    expect(standin.tray.tooltip).toMatch(/degraded/);
    expect(standin.tray.item('status').label).toMatch(/^Degraded: /);
    await until(() => titles().includes('Gateway down'), 5000, 'the gateway-down notice');

    await shell.api('/api/settings', {
      method: 'PUT',
      body: { gatewayUrl: gateway.url, gatewayToken: gateway.token },
    });
    await until(() => icon() === 'tray-offline.png', 10_000, 'the icon back to offline');
  });

  it('quits by stopping the core first: before-quit prevented, agent and console closed, then quit', async () => {
    const { agent } = await shell.status();
    // The console, once closed, no longer names its URL in console.json (it keeps the token for the next run).
    let consoleUrlAtTrayDestroy: string | undefined;
    calls.onCall(
      'tray.destroy',
      () =>
        (consoleUrlAtTrayDestroy = (JSON.parse(readFileSync(shell.consoleFile, 'utf8')) as { url: string })
          .url),
    );
    const quitsBefore = calls.of('app.quit').length;

    standin.tray.click('quit');
    expect(calls.of('before-quit.preventDefault')).toHaveLength(1);
    expect(standin.app.quitted).toBe(false);
    await until(() => standin.app.quitted, 15_000, 'the app to stop its core and quit');

    expect(consoleUrlAtTrayDestroy).toBe('');
    await expect(fetch(`${agent.localUrl}/.well-known/agent.json`)).rejects.toThrow();
    await expect(fetch(`${shell.console.url}/`)).rejects.toThrow();
    // The second quit comes after the core stopped and the tray went, and nothing prevents it.
    expect(calls.of('app.quit')).toHaveLength(quitsBefore + 2);
    expect(calls.lastIndexOf('app.quit')).toBeGreaterThan(calls.indexOf('tray.destroy'));
    expect(calls.of('before-quit.preventDefault')).toHaveLength(1);
    expect(standin.tray.destroyed).toBe(true);
    expect(standin.window.destroyed).toBe(true);
  });
});
