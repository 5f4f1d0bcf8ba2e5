import { describe, expect, it } from 'vitest';
import { WebhookSender, webhookRules } from '../../src/lib/webhook.js';

// The address rule SAMVAD callbacks and A2A push notifications share, as --dev-http-peers sets it.
const sender = (devHttpPeers: boolean) =>
  new WebhookSender({ name: 'the URL', ...webhookRules(devHttpPeers) });

describe('webhook address rules', () => {
  it('take public https only; loopback (also over plain http) under --dev-http-peers, nothing else', () => {
    const strict = sender(false);
    expect(strict.check('https://hooks.example.com/a2a').hostname).toBe('hooks.example.com');
    expect(() => strict.check('http://127.0.0.1:8080/x')).toThrow(/must be an https:\/\/ URL/);
    expect(() => strict.check('https://127.0.0.1/x')).toThrow(/public address/);
    expect(() => strict.check('https://localhost/x')).toThrow(/localhost/);
    const dev = sender(true);
    expect(dev.check('http://127.0.0.1:8080/x').port).toBe('8080');
    expect(dev.check('http://localhost:8080/x').hostname).toBe('localhost');
    expect(() => dev.check('http://hooks.example.com/x')).toThrow(/must be an https:\/\/ URL/);
    expect(() => dev.check('https://10.0.0.8/x')).toThrow(/public address/);
    expect(() => dev.check('https://user:pw@hooks.example.com/x')).toThrow(/credentials/);
  });

  it("report a network error's text to the operator as one escaped, capped line", async () => {
    const events: { outcome: string; message?: string }[] = [];
    const hostile = `getaddrinfo failed \u001b[31m${'x'.repeat(400)}\nforged: delivered\u202e`;
    const webhook = new WebhookSender({
      name: 'the URL',
      ...webhookRules(false),
      backoffMs: [],
      resolveHost: () => Promise.reject(new Error(hostile)),
      onEvent: (event) => events.push(event),
    });
    const request = {
      taskId: 't',
      url: 'https://hooks.example.com/x',
      body: Buffer.from('{}'),
      contentType: 'application/json',
      headers: () => ({}),
    };
    expect(await webhook.deliver(request)).toEqual({ outcome: 'failed', attempts: 1 });
    const message = events.at(-1)?.message ?? '';
    expect(message).toMatch(/^getaddrinfo failed /);
    // eslint-disable-next-line no-control-regex -- the point: no raw control character in the line
    expect(message).not.toMatch(/[\u0000-\u001f\u202e]/);
    expect(message.length).toBeLessThan(400);
  });
});
