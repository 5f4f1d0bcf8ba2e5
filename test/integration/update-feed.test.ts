import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import {
  createServer,
  request,
  type IncomingMessage,
  type RequestOptions,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import electronUpdater from 'electron-updater';
import type { AppAdapter } from 'electron-updater/out/AppAdapter.js';
import { ElectronHttpExecutor } from 'electron-updater/out/electronHttpExecutor.js';
import yaml from 'js-yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppUpdates, type Updater } from '../../electron/updates.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

// The download path of updates: electron-updater's own NSIS updater (what an installed Windows app runs)
// against a loopback double of a GitHub release feed, driven by the shell's AppUpdates. It reads the feed as
// it reads github.com (a releases Atom feed, the latest release's tag, latest.yml, the installer) through
// the `host` and `protocol` that GitHub Enterprise uses, and checks the file against latest.yml's sha512.
// What cannot run here, and is replaced: Electron's network stack (electron.net) by Node's http, through
// the updater's executor; Electron's `app` by an app adapter (electron-updater's own seam); the platform by
// electron-updater's test option (win32), since Windows' signature check (PowerShell) cannot run here
// either: the check is given as a function, as electron-updater allows. The Mac updater cannot run at all
// (it hands the file to Squirrel.Mac, native to Electron on macOS), and Linux builds do not update
// themselves (unsigned): the release workflow's smoke tests run on those platforms.
const OWNER = 'someone';
const REPO = 'agent-bridge';
const INSTALLER = 'agent-bridge-0.2.0-win-x64.exe';

interface Feed {
  version: string;
  installer: Buffer;
  /** What latest.yml says the installer's sha512 is; the installer's own by default. */
  sha512?: string;
}

class FeedDouble {
  readonly requests: string[] = [];
  feed: Feed = { version: '0.2.0', installer: randomBytes(64 * 1024) };
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => this.answer(req.url ?? '/', res));
  }

  get host(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(url: string, res: ServerResponse): void {
    const path = new URL(url, 'http://feed').pathname;
    this.requests.push(path);
    const tag = `v${this.feed.version}`;
    const base = `/${OWNER}/${REPO}/releases`;
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (path === `${base}.atom`) {
      return send(
        'application/atom+xml',
        `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <entry>
    <id>tag:github.com,2008:Repository/1/${tag}</id>
    <updated>2026-11-26T10:00:00Z</updated>
    <link rel="alternate" type="text/html" href="http://${this.host}${base}/tag/${tag}"/>
    <title>Agent Bridge ${this.feed.version}</title>
    <content type="html">What changed.</content>
  </entry>
</feed>`,
      );
    }
    if (path === `/api/v3/repos/${OWNER}/${REPO}/releases/latest`)
      return send('application/json', JSON.stringify({ tag_name: tag }));
    if (path === `${base}/download/${tag}/latest.yml`) {
      const sha512 = this.feed.sha512 ?? createHash('sha512').update(this.feed.installer).digest('base64');
      return send(
        'text/yaml',
        yaml.dump({
          version: this.feed.version,
          files: [{ url: INSTALLER, sha512, size: this.feed.installer.length }],
          path: INSTALLER,
          sha512,
          releaseDate: '2026-11-26T10:00:00.000Z',
        }),
      );
    }
    if (path === `${base}/download/${tag}/${INSTALLER}`)
      return send('application/octet-stream', this.feed.installer);
    res.writeHead(404).end();
  }
}

/** electron-updater's own executor (downloads, digests, progress), sending through Node's http, not electron.net. */
class NodeExecutor extends ElectronHttpExecutor {
  override createRequest(
    options: RequestOptions,
    callback: (response: IncomingMessage) => void,
  ): Electron.ClientRequest {
    // The executor uses the events both requests have ('response', 'error', 'abort'), and write/end.
    return request(options, callback) as unknown as Electron.ClientRequest;
  }
}

/** The app as electron-updater sees it: version 0.1.0, installed, with its app-update.yml. */
function appAdapter(dir: string, quits: string[], isPackaged = true): AppAdapter {
  return {
    version: '0.1.0',
    name: 'Agent Bridge',
    isPackaged,
    appUpdateConfigPath: join(dir, 'app-update.yml'),
    userDataPath: join(dir, 'user-data'),
    baseCachePath: join(dir, 'cache'),
    whenReady: () => Promise.resolve(),
    relaunch: () => quits.push('relaunch'),
    quit: () => quits.push('quit'),
    onQuit: () => undefined,
  };
}

const feed = new FeedDouble();
const dirs: string[] = [];
let signatureCheck: (publishers: string[], file: string) => Promise<string | null>;

beforeAll(() => feed.listen());
afterAll(async () => {
  await feed.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  feed.feed = { version: '0.2.0', installer: randomBytes(64 * 1024) };
  feed.requests.length = 0;
});

/** The shell's updates over a real NSIS updater, as an installed signed Windows app has them. */
function installedApp(isPackaged = true) {
  const dir = tempDir('agent-bridge-update-');
  dirs.push(dir);
  // As electron-builder writes it from electron-builder.yml's publish (owner and repo from the workflow), with
  // the publisher of the signing certificate; `host`/`protocol` point it at the double.
  writeFileSync(
    join(dir, 'app-update.yml'),
    yaml.dump({
      owner: OWNER,
      repo: REPO,
      provider: 'github',
      host: feed.host,
      protocol: 'http',
      updaterCacheDirName: 'agent-bridge-updater',
      publisherName: ['Agent Bridge developers'],
    }),
  );
  const quits: string[] = [];
  const nsis = new electronUpdater.NsisUpdater(null, appAdapter(dir, quits, isPackaged));
  // Its log would repeat what the assertions check.
  nsis.logger = null;
  Object.assign(nsis, {
    httpExecutor: new NodeExecutor(),
    _testOnlyOptions: { platform: 'win32', isUseDifferentialDownload: false },
  });
  nsis.disableWebInstaller = true;
  signatureCheck = () => Promise.resolve(null);
  nsis.verifyUpdateCodeSignature = (publishers, file) => signatureCheck(publishers, file);
  let changes = 0;
  const updates = new AppUpdates({
    current: '0.1.0',
    build: { signed: true },
    packaged: true,
    autoUpdate: () => true,
    createUpdater: () => nsis as Updater,
    onChange: () => changes++,
  });
  const pending = join(dir, 'cache', 'agent-bridge-updater', 'pending');
  return { dir, updates, quits, pending, changes: () => changes };
}

describe('updates from a GitHub release feed (electron-updater, NSIS)', () => {
  it('finds the newer version, downloads it in the background, checks its sha512 and offers the restart', async () => {
    const app = installedApp();
    const verified: string[][] = [];
    signatureCheck = (publishers) => {
      verified.push(publishers);
      return Promise.resolve(null);
    };
    app.updates.check(false);
    await until(() => app.updates.view().state.phase === 'ready', 10_000, 'the update to be downloaded');
    expect(app.updates.view().state).toEqual({ phase: 'ready', version: '0.2.0' });
    expect(feed.requests).toEqual([
      `/${OWNER}/${REPO}/releases.atom`,
      `/api/v3/repos/${OWNER}/${REPO}/releases/latest`,
      `/${OWNER}/${REPO}/releases/download/v0.2.0/latest.yml`,
      `/${OWNER}/${REPO}/releases/download/v0.2.0/${INSTALLER}`,
    ]);
    // The installer is in the updater's cache, byte for byte, and was checked against the app's publisher.
    expect(readFileSync(join(app.pending, INSTALLER)).equals(feed.feed.installer)).toBe(true);
    expect(verified).toEqual([['Agent Bridge developers']]);
    expect(app.changes()).toBeGreaterThanOrEqual(3);
  });

  it('says the app is up to date when the feed has its own version', async () => {
    const app = installedApp();
    feed.feed = { version: '0.1.0', installer: Buffer.from('same') };
    app.updates.check(true);
    await until(() => app.updates.view().state.phase === 'idle', 10_000, 'the check to end');
    expect(app.updates.view().state).toMatchObject({ phase: 'idle', lastCheckAt: expect.any(Number) });
    expect(feed.requests.some((path) => path.endsWith('.exe'))).toBe(false);
  });

  it('refuses a file whose sha512 is not the one latest.yml names, and keeps nothing of it', async () => {
    const app = installedApp();
    feed.feed = {
      ...feed.feed,
      sha512: createHash('sha512').update('another file').digest('base64'),
    };
    app.updates.check(false);
    await until(() => app.updates.view().state.phase === 'failed', 10_000, 'the download to fail');
    expect(app.updates.view().state).toMatchObject({
      phase: 'failed',
      failures: 1,
      message: expect.stringMatching(/sha512 checksum mismatch/),
    });
    expect(existsSync(app.pending) ? readdirSync(app.pending) : []).toEqual([]);
    // Nothing to install: "Restart to update" is not offered, and install() refuses.
    expect(app.updates.install()).toBe(false);
    expect(app.quits).toEqual([]);
  });

  it('refuses an installer that is not signed by the app publisher', async () => {
    const app = installedApp();
    signatureCheck = () => Promise.resolve('publisher "Someone Else" is not "Agent Bridge developers"');
    app.updates.check(false);
    await until(() => app.updates.view().state.phase === 'failed', 10_000, 'the download to fail');
    expect(app.updates.view().state).toMatchObject({
      message: expect.stringMatching(/^New version 0\.2\.0 is not signed by the application owner/),
    });
    expect(existsSync(app.pending) ? readdirSync(app.pending) : []).toEqual([]);
  });

  it('reports a feed it cannot reach as a failure to retry, not a crash', async () => {
    const app = installedApp();
    writeFileSync(
      join(app.dir, 'app-update.yml'),
      yaml.dump({ owner: OWNER, repo: REPO, provider: 'github', host: '127.0.0.1:1', protocol: 'http' }),
    );
    app.updates.check(false);
    await until(() => app.updates.view().state.phase === 'failed', 10_000, 'the check to fail');
    expect(app.updates.view().state).toMatchObject({
      failures: 1,
      message: expect.stringMatching(/ECONNREFUSED|127\.0\.0\.1:1/),
    });
  });

  it('moves on when electron-updater declines to check (an app it does not see as installed)', async () => {
    const app = installedApp(false);
    app.updates.check(false);
    await until(
      () => app.updates.view().state.phase === 'idle' && app.changes() > 0,
      5000,
      'the check to end',
    );
    expect(app.updates.view().state).toMatchObject({ phase: 'idle', lastCheckAt: expect.any(Number) });
    expect(feed.requests).toEqual([]);
  });
});
