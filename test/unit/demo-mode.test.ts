// `serve --demo` (issue 26): what turns it on and what it refuses, and its stand-in gateway as the bridge's
// own gateway client reads it (the same code that reads OpenClaw), plain, streamed and refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callGateway, type GatewayConfig } from '../../src/bridge/gateway-client.js';
import { listGatewayAgents } from '../../src/bridge/gateway-agents.js';
import { probeGateway } from '../../src/bridge/gateway-health.js';
import { demoReply, startDemoGateway, type DemoGateway } from '../../src/demo/demo-gateway.js';
import { checkDemoArgs, demoBannerLines, demoDataDir } from '../../src/demo/demo-mode.js';
import { parseServeArgs } from '../../src/settings/flags.js';
import { validateSettings } from '../../src/settings/schema.js';

describe('what turns the demo on', () => {
  it('the --demo flag for one run, and nothing that is saved: settings.json cannot hold it', () => {
    expect(parseServeArgs(['--demo'], {}).demo).toBe(true);
    expect(parseServeArgs([], { AGENT_BRIDGE_DEMO: '1', DEMO: '1' }).demo).toBe(false);
    expect(validateSettings({ demo: true })).toMatchObject({
      ok: false,
      errors: [{ field: 'demo', message: 'demo: is not a known setting' }],
    });
  });

  it('keeps a data dir of its own, inside the one the agent uses', () => {
    expect(demoDataDir({ AGENT_BRIDGE_DATA_DIR: '/srv/bridge' })).toBe('/srv/bridge/demo');
    expect(
      demoBannerLines('agent://127.0.0.1:8787', '/srv/bridge/demo', { AGENT_BRIDGE_DATA_DIR: '/srv/bridge' }),
    ).toContain(
      `  Call it:    npx agent-bridge call --demo agent://127.0.0.1:8787 "Hello"   (then see it in the console's Traffic)`,
    );
    expect(demoBannerLines('agent://127.0.0.1:8787', '/tmp/my demo', {})[1]).toContain(
      "call --data-dir '/tmp/my demo' agent://127.0.0.1:8787",
    );
  });
});

describe('what --demo refuses', () => {
  const refusal = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    try {
      checkDemoArgs(parseServeArgs(['--demo', ...argv], env));
    } catch (error) {
      return (error as Error).message;
    }
    return undefined;
  };

  it("a real gateway's address, token or model, naming the flag or variable to drop", () => {
    expect(refusal(['--gateway-url', 'http://127.0.0.1:18789', '--gateway-token', 'tok'])).toBe(
      '--demo brings its own stand-in gateway, so it cannot be combined with --gateway-url and ' +
        '--gateway-token: drop --gateway-url and --gateway-token to try the demo, or drop --demo to bridge your gateway.',
    );
    expect(refusal([], { GATEWAY_TOKEN: 'secret-token' })).toMatch(
      /cannot be combined with GATEWAY_TOKEN: unset GATEWAY_TOKEN to try the demo/,
    );
    expect(refusal(['--gateway-model', 'openclaw/main'])).toMatch(/combined with --gateway-model/);
    // The token's value is never repeated.
    expect(refusal([], { GATEWAY_TOKEN: 'secret-token' })).not.toContain('secret-token');
  });

  it('--register: a demo agent is not listed in the registry', () => {
    expect(refusal(['--register'])).toBe(
      '--demo cannot be combined with --register: a demo agent is not listed in the registry. Drop --register.',
    );
  });

  it('nothing else: a port, a tunnel or an agent for callers are the operator’s choice', () => {
    expect(refusal(['--port', '9000', '--tunnel', 'localtunnel', '--gateway-agent', 'main'])).toBeUndefined();
  });
});

describe('the stand-in gateway', () => {
  let gateway: DemoGateway;
  let config: GatewayConfig;
  beforeAll(async () => {
    gateway = await startDemoGateway({ deltaDelayMs: 1 });
    config = { url: gateway.url, token: gateway.token, model: 'openclaw/public', timeoutMs: 5000 };
  });
  afterAll(() => gateway?.close());

  it('is live and lists its agents, as OpenClaw does', async () => {
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await probeGateway(config)).toMatchObject({ live: true });
    expect(await listGatewayAgents(config)).toMatchObject({
      ok: true,
      agents: ['default', 'main', 'public'],
    });
  });

  it('answers every message with a labelled reply, plain and streamed, and counts tokens', async () => {
    const plain = await callGateway(config, { message: 'Hello\nthere', user: 'someone' });
    expect(plain.reply).toBe(demoReply('Hello\nthere'));
    expect(plain.reply).toMatch(/^\[demo\] No model is behind this reply: /);
    expect(plain.reply).toContain('("Hello there", 11 characters)');
    expect(plain.usage?.totalTokens).toBeGreaterThan(0);

    const deltas: string[] = [];
    const streamed = await callGateway(config, {
      message: 'Hello',
      user: 'someone',
      onDelta: (text) => deltas.push(text),
    });
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join('')).toBe(demoReply('Hello'));
    expect(streamed.reply).toBe(demoReply('Hello'));
  });

  it('refuses a wrong token and an agent it does not run, in OpenClaw’s words', async () => {
    await expect(
      callGateway({ ...config, token: 'wrong' }, { message: 'x', user: 'u' }),
    ).rejects.toMatchObject({
      problem: 'unauthorized',
    });
    await expect(
      callGateway({ ...config, model: 'openclaw/ops' }, { message: 'x', user: 'u' }),
    ).rejects.toThrow(/Unknown agent 'ops'/);
  });
});
