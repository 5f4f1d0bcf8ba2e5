import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { turnContent, type TurnContent } from '../../src/calls/attachments.js';
import { attachmentRules, fetchImages, type ImageFetchOptions } from '../../src/calls/image-fetch.js';
import { PNG } from '../helpers/a2a-parts.js';

// The image fetcher's own bounds, with its seams: a name that resolves to a private address (no DNS reaches
// these tests), an answer that never comes, a body past its bound however it is sent. Through the A2A door:
// a2a-file-urls.test.ts.
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function rules(devHttpPeers: boolean, options: ImageFetchOptions = {}, bodyLimitBytes = 1024 * 1024) {
  return attachmentRules({ fetchImageUrls: true, devHttpPeers, bodyLimitBytes }, options);
}

function byUrl(url: string, rulesNow = rules(true)): TurnContent {
  return turnContent(['look', { name: 'x.png', mediaType: 'image/png', body: { url } }], rulesNow);
}

describe('fetching an image sent by URL', () => {
  it('refuses a name that resolves to a private address, before connecting', async () => {
    let asked = '';
    const strict = rules(false, {
      resolveHost: async (hostname) => {
        asked = hostname;
        return [{ address: '10.0.0.8', family: 4 }];
      },
    });
    const content = byUrl('https://images.example.com/cat.png', strict);
    await expect(fetchImages(content, strict)).rejects.toMatchObject({
      httpStatus: 400,
      message:
        "Image URL refused: the image URL's host images.example.com resolves to 10.0.0.8, which is not a public address.",
    });
    expect(asked).toBe('images.example.com');
  });

  it('gives up on an answer that does not come within its time', async () => {
    const base = await serve(() => undefined);
    const slow = rules(true, { timeoutMs: 200 });
    const started = Date.now();
    await expect(fetchImages(byUrl(`${base}/slow.png`, slow), slow)).rejects.toMatchObject({
      message: expect.stringMatching(/\/slow\.png did not arrive within 0\.2 s/),
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops reading past its bound, whether the length is declared or not', async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(4000)]);
    const base = await serve((req, res) => {
      if (req.url === '/declared.png') res.writeHead(200, { 'content-length': big.length }).end(big);
      else {
        // Chunked, no length: the bound is found while reading.
        res.writeHead(200);
        res.write(big.subarray(0, 2000));
        setTimeout(() => res.end(big.subarray(2000)), 20);
      }
    });
    const small = rules(true, {}, 3000);
    for (const path of ['/declared.png', '/chunked.png']) {
      await expect(fetchImages(byUrl(`${base}${path}`, small), small)).rejects.toMatchObject({
        httpStatus: 413,
        message: expect.stringMatching(
          /Image "x\.png" is larger than the 3000 bytes left of this agent's limit of 3000 bytes/,
        ),
      });
    }
  });

  it('fills in the image and its note: bytes as base64, type and size as fetched', async () => {
    const base = await serve((_req, res) => res.writeHead(200, { 'content-type': 'image/gif' }).end(PNG));
    const content = byUrl(`${base}/dot`);
    await fetchImages(content, rules(true));
    expect(content.images).toEqual([
      {
        note: { name: 'x.png', type: 'image/png', bytes: PNG.length, fetched: true },
        base64: PNG.toString('base64'),
      },
    ]);
    expect(content.files).toEqual([content.images[0]?.note]);
  });
});
