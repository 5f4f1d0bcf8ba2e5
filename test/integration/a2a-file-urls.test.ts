import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { startGatewayDouble, type GatewayDouble, type RecordedRequest } from '../fixtures/gateway-double.js';
import { a2aClient, type Transport } from '../helpers/a2a-agent.js';
import { asTask } from '../helpers/a2a-messages.js';
import {
  PNG,
  pngOfSize,
  sendParts,
  startFileServer,
  textPart,
  urlPart,
  type FileServer,
} from '../helpers/a2a-parts.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import type { EnvelopeEvent } from '../../src/agent/events.js';

// Images sent by URL (issue 28, item 2): refused unless the operator allows fetching them; then fetched by the
// push notification address rules. No public host is reachable here: a file server on loopback stands in,
// reachable only under --dev-http-peers (as the push tests reach their receiver), and the rules' refusals are
// shown with private and loopback addresses. A name that resolves to a private address: image-fetch.test.ts.
const TOKEN = 'gw-token-a2a-file-urls';
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60)]);
let gateway: GatewayDouble;
let files: FileServer;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));
let agent: TestAgent;
let key: string;
const events: EnvelopeEvent[] = [];

const chats = (): RecordedRequest[] => gateway.requests.filter((r) => r.path === '/v1/chat/completions');
const lastSend = () => events.filter((event) => event.a2a?.method === 'SendMessage').at(-1);

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  files = await startFileServer({
    '/dot.png': { body: PNG, type: 'image/png' },
    // A JPEG the server calls a PNG: it goes by its bytes.
    '/photo': { body: JPEG, type: 'image/png' },
    '/page.html': { body: Buffer.from('<!doctype html><p>hi</p>'), type: 'text/html' },
    '/moved.png': { status: 302, location: '/dot.png' },
    '/big.png': { body: pngOfSize(300_000), type: 'image/png' },
  });
  agent = await agents.start({ settings: { access: 'pairing', devHttpPeers: true } });
  key = (await agent.app.a2aKeys.issue({ name: 'URL agent' })).secret;
  agent.app.on('envelope', (event) => events.push(event));
});

beforeEach(() => {
  gateway.requests.length = 0;
  files.requested.length = 0;
  events.length = 0;
  agent.app.updateSettings({ fetchImageUrls: false, devHttpPeers: true });
});

afterAll(async () => {
  await agents.closeAll();
  await gateway.close();
  await files.close();
});

const ask = (transport: Transport, url: string, name = 'img.png') =>
  a2aClient(agent.url, key, transport).then((client) =>
    client.sendMessage(sendParts([textPart('Describe it'), urlPart(url, 'image/png', name)])),
  );
const refusal = (transport: Transport, url: string) => ask(transport, url).catch((error: unknown) => error);

describe.each<Transport>(['JSONRPC', 'HTTP+JSON'])('over %s', (transport) => {
  it('an image by URL is refused by default, with ContentTypeNotSupported, and nothing is fetched', async () => {
    const refused = await refusal(transport, files.url('/dot.png'));
    expect(refused).toMatchObject({
      message: expect.stringMatching(
        /does not take images by URL: its operator has not allowed fetching them \("img\.png"\): send the file's bytes inline\. It takes text;/,
      ),
    });
    expect((refused as Error).constructor.name).toMatch(/ContentTypeNotSupported/);
    expect(files.requested).toEqual([]);
    expect(chats()).toEqual([]);
  });

  it('allowed, it is fetched and reaches the gateway as an image_url part of its bytes', async () => {
    agent.app.updateSettings({ fetchImageUrls: true });
    const task = asTask(await ask(transport, files.url('/dot.png')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(files.requested).toEqual(['/dot.png']);
    expect(chats()[0]?.images).toEqual([{ mediaType: 'image/png', declared: 'image/png', bytes: PNG }]);
    expect(chats()[0]?.text).toBe('Describe it\n\n[image 1 "img.png" (attached, from a URL)]');
    expect(lastSend()?.files).toEqual([
      { name: 'img.png', type: 'image/png', bytes: PNG.length, fetched: true },
    ]);
  });
});

describe('fetched, by the public-address rules', () => {
  it('goes by the bytes: a JPEG the server calls a PNG is sent as a JPEG', async () => {
    agent.app.updateSettings({ fetchImageUrls: true });
    await ask('JSONRPC', files.url('/photo'), 'photo');
    expect(chats()[0]?.images).toEqual([{ mediaType: 'image/jpeg', declared: 'image/jpeg', bytes: JPEG }]);
  });

  it('refuses private and link-local addresses, and loopback without --dev-http-peers', async () => {
    agent.app.updateSettings({ fetchImageUrls: true });
    for (const url of [
      'https://10.0.0.8/cat.png',
      'https://169.254.169.254/latest/cat.png',
      'https://[fd00::1]/c.png',
    ]) {
      expect(await refusal('JSONRPC', url)).toMatchObject({
        message:
          'Image URL refused: the image URL must point to a public address, not a loopback, private or link-local one.',
      });
    }
    agent.app.updateSettings({ devHttpPeers: false });
    expect(await refusal('HTTP+JSON', files.url('/dot.png'))).toMatchObject({
      message: 'Image URL refused: the image URL must be an https:// URL.',
    });
    expect(await refusal('HTTP+JSON', files.url('/dot.png').replace('http:', 'https:'))).toMatchObject({
      message: expect.stringMatching(/must point to a public address/),
    });
    expect(await refusal('JSONRPC', 'https://localhost/cat.png')).toMatchObject({
      message: 'Image URL refused: the image URL must not point to localhost.',
    });
    expect(files.requested).toEqual([]);
    expect(chats()).toEqual([]);
  });

  it('follows no redirect, and refuses what is not an image', async () => {
    agent.app.updateSettings({ fetchImageUrls: true });
    expect(await refusal('JSONRPC', files.url('/moved.png'))).toMatchObject({
      message: expect.stringMatching(
        /could not be fetched: HTTP 302 \(redirects are not followed: send the final URL\)/,
      ),
    });
    expect(await refusal('JSONRPC', files.url('/page.html'))).toMatchObject({
      message: expect.stringMatching(/page\.html is not a PNG, JPEG, GIF or WebP image/),
    });
    expect(files.requested).toEqual(['/moved.png', '/page.html']);
    expect(chats()).toEqual([]);
  });

  it('counts what it fetches against the body limit, with the inline files', async () => {
    agent.app.updateSettings({ fetchImageUrls: true });
    const refused = await refusal('HTTP+JSON', files.url('/big.png'));
    expect(refused).toMatchObject({
      statusCode: 413,
      message: expect.stringMatching(
        /Image "img\.png" is larger than the \d+ bytes left of this agent's limit of 262144 bytes for a message's files/,
      ),
    });
    expect(chats()).toEqual([]);
  });
});
