import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callGateway, type GatewayConfig } from '../../src/bridge/gateway-client.js';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { PNG, pngOfSize } from '../helpers/a2a-parts.js';

// Images on the chat endpoint: the gateway client sends them as OpenAI `image_url` parts with data: URLs,
// and the gateway double takes them as OpenClaw 2026.9 does (docs/gateway/openai-http-api.md and its
// openai-http handler: 8 parts, base64 data URLs, 10 MB each, 20 MB in all, a 20 MB body, images by their
// bytes, URLs only with images.allowUrl), answering its bare 400 or 413 otherwise.
let gateway: GatewayDouble;
let config: GatewayConfig;

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: 'tok-images-0123456789', agents: ['main'] });
  config = { url: gateway.url, token: gateway.token, model: 'openclaw', timeoutMs: 10_000 };
});
afterAll(() => gateway.close());
beforeEach(() => {
  gateway.requests.length = 0;
  gateway.set({ imageAllowUrl: false });
});

/** A chat request with these user content parts, as a client other than ours might send it. */
function post(content: unknown, extra = '') {
  const body = JSON.stringify({ model: 'openclaw', messages: [{ role: 'user', content }] }) + extra;
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.token}`, 'content-type': 'application/json' },
    body,
  });
}
const image = (url: string) => ({ type: 'image_url', image_url: { url } });
const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

describe('the gateway client', () => {
  it('sends the message as a text part and each image as an image_url part with a data: URL', async () => {
    const reply = await callGateway(config, {
      message: 'two pictures',
      images: [
        { mediaType: 'image/png', base64: PNG.toString('base64') },
        { mediaType: 'image/png', base64: PNG.toString('base64') },
      ],
      user: 'u',
    });
    expect(reply.reply).toBe('echo: two pictures');
    const [request] = gateway.requests;
    const messages = (request?.json as { messages: { content: unknown }[] }).messages;
    expect(messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'two pictures' },
      image(dataUrl(PNG)),
      image(dataUrl(PNG)),
    ]);
    expect(request?.text).toBe('two pictures');
    expect(request?.images).toEqual([
      { mediaType: 'image/png', declared: 'image/png', bytes: PNG },
      { mediaType: 'image/png', declared: 'image/png', bytes: PNG },
    ]);
  });

  it('sends a message without images as a plain string, as before', async () => {
    await callGateway(config, { message: 'plain', user: 'u' });
    expect((gateway.requests[0]?.json as { messages: { content: unknown }[] }).messages.at(-1)?.content).toBe(
      'plain',
    );
  });
});

describe('the gateway double, as OpenClaw', () => {
  const INVALID = {
    error: { message: 'Invalid image_url content in `messages`.', type: 'invalid_request_error' },
  };

  it('joins text parts with line breaks and takes an image-only message', async () => {
    expect(
      (
        await post([
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ])
      ).status,
    ).toBe(200);
    expect(gateway.requests.at(-1)?.text).toBe('a\nb');
    expect((await post([image(dataUrl(PNG))])).status).toBe(200);
  });

  it('refuses 9 images, a data URL not in base64, and bytes that declare an image but are a PDF', async () => {
    for (const content of [
      Array.from({ length: 9 }, () => image(dataUrl(PNG))),
      [image('data:image/png,rawbytes')],
      [image(dataUrl(Buffer.from('%PDF-1.7 fake'), 'image/png'))],
      [{ type: 'image_url', image_url: {} }],
    ]) {
      const response = await post(content);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual(INVALID);
    }
  });

  it('takes bytes it cannot place by their declared type, as OpenClaw falls back to it', async () => {
    expect((await post([image(dataUrl(Buffer.from('unknown bytes'), 'image/webp'))])).status).toBe(200);
    expect(gateway.requests.at(-1)?.images?.[0]?.mediaType).toBe('image/webp');
  });

  it('refuses an image over 10 MB, and a body over 20 MB', async () => {
    expect((await post([image(dataUrl(pngOfSize(10 * 1024 * 1024 + 1)))])).status).toBe(400);
    // 16 MB of images is 21.3 MB of base64: the body is refused before its images are read.
    const four = Array.from({ length: 4 }, () => image(dataUrl(pngOfSize(4 * 1024 * 1024))));
    const response = await post(four);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: { message: 'Payload too large', type: 'invalid_request_error' },
    });
  });

  it('refuses an image by URL unless images.allowUrl is on', async () => {
    expect((await post([image('https://cdn.example.com/cat.png')])).status).toBe(400);
    gateway.set({ imageAllowUrl: true });
    expect(
      (await post([{ type: 'text', text: 'see' }, image('https://cdn.example.com/cat.png')])).status,
    ).toBe(200);
    expect(gateway.requests.at(-1)?.images).toEqual([
      { mediaType: '', declared: '', bytes: Buffer.alloc(0), url: 'https://cdn.example.com/cat.png' },
    ]);
  });
});
