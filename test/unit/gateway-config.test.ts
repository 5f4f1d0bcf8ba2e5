// Where the bridge finds its gateway: settings, env, aliases, the OpenClaw config file, the default.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readOpenClawConfig, resolveGatewayConfig } from '../../src/bridge/gateway-config.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes an OpenClaw config file and returns its path. */
function openclawFile(text: string): string {
  const path = join(dir, `openclaw-${++files}.json`);
  writeFileSync(path, text);
  return path;
}
const noFile = join(dir, 'does-not-exist.json');

const tokenFile = openclawFile(`// the operator's gateway
{
  gateway: {
    port: 19001, // not the default
    auth: { mode: 'token', token: 'file-token', password: 'file-password' },
    http: { endpoints: { chatCompletions: { enabled: true } } },
  },
}`);

describe('resolveGatewayConfig', () => {
  it('falls back to the default loopback URL, model and timeout', () => {
    const resolved = resolveGatewayConfig({}, {}, noFile);
    expect(resolved).toEqual({
      config: { url: 'http://127.0.0.1:18789', token: '', model: 'openclaw', timeoutMs: 120_000 },
      status: 'missing GATEWAY_TOKEN',
      source: { url: 'default', token: 'none' },
    });
  });

  it('prefers explicit settings over env and the config file', () => {
    const env = { GATEWAY_URL: 'http://env:1', GATEWAY_TOKEN: 'env-token' };
    const input = { url: 'http://setting:2', token: 'setting-token', model: 'openclaw/ops', timeoutMs: 5000 };
    const resolved = resolveGatewayConfig(input, env, tokenFile);
    expect(resolved.config).toEqual({
      url: 'http://setting:2',
      token: 'setting-token',
      model: 'openclaw/ops',
      timeoutMs: 5000,
    });
    expect(resolved.source).toEqual({ url: 'setting', token: 'setting' });
    expect(resolved.status).toBe('configured');
  });

  it('prefers GATEWAY_* over the OPENCLAW_* aliases, and the aliases over the config file', () => {
    const both = {
      GATEWAY_URL: 'http://primary:1',
      GATEWAY_TOKEN: 'primary',
      OPENCLAW_GATEWAY_URL: 'http://alias:2',
      OPENCLAW_GATEWAY_TOKEN: 'alias',
    };
    expect(resolveGatewayConfig({}, both, tokenFile).config).toMatchObject({
      url: 'http://primary:1',
      token: 'primary',
    });
    const aliases = { OPENCLAW_GATEWAY_URL: 'http://alias:2', OPENCLAW_GATEWAY_TOKEN: 'alias' };
    const resolved = resolveGatewayConfig({}, aliases, tokenFile);
    expect(resolved.config).toMatchObject({ url: 'http://alias:2', token: 'alias' });
    expect(resolved.source).toEqual({ url: 'env', token: 'env' });
  });

  it('accepts OPENCLAW_GATEWAY_PASSWORD as the token', () => {
    const resolved = resolveGatewayConfig({}, { OPENCLAW_GATEWAY_PASSWORD: 'pw' }, noFile);
    expect(resolved.config.token).toBe('pw');
    expect(resolved.source.token).toBe('env');
  });

  it('in password mode prefers OPENCLAW_GATEWAY_PASSWORD, which is what the gateway checks', () => {
    const path = openclawFile('{ gateway: { auth: { mode: "password", password: "p" } } }');
    const env = { OPENCLAW_GATEWAY_TOKEN: 'stale-token', OPENCLAW_GATEWAY_PASSWORD: 'pw' };
    expect(resolveGatewayConfig({}, env, path).config.token).toBe('pw');
    expect(resolveGatewayConfig({}, env, tokenFile).config.token).toBe('stale-token');
  });

  it('reads the URL and token from a JSON5 OpenClaw config with comments', () => {
    const resolved = resolveGatewayConfig({}, {}, tokenFile);
    expect(resolved.config).toMatchObject({ url: 'http://127.0.0.1:19001', token: 'file-token' });
    expect(resolved.source).toEqual({ url: 'openclaw-config', token: 'openclaw-config' });
    expect(resolved.status).toBe('configured');
  });

  it('honours OPENCLAW_CONFIG_PATH when no path is given', () => {
    const resolved = resolveGatewayConfig({}, { OPENCLAW_CONFIG_PATH: tokenFile });
    expect(resolved.config.token).toBe('file-token');
  });

  it('ignores empty env values', () => {
    const resolved = resolveGatewayConfig({}, { GATEWAY_URL: '', GATEWAY_TOKEN: '  ' }, tokenFile);
    expect(resolved.source).toEqual({ url: 'openclaw-config', token: 'openclaw-config' });
  });

  it.each([
    ['missing', noFile],
    ['invalid', openclawFile('{ gateway: { port: ')],
    ['not an object', openclawFile('[1, 2]')],
    ['a directory', dir],
  ])('treats a %s config file as no source', (_name, path) => {
    const resolved = resolveGatewayConfig({}, {}, path);
    expect(resolved.source).toEqual({ url: 'default', token: 'none' });
    expect(resolved.status).toBe('missing GATEWAY_TOKEN');
  });

  it.each([
    ['an empty URL setting', { url: '', token: 't' }],
    ['a URL that does not parse', { url: 'localhost 18789', token: 't' }],
    ['a non-http URL', { url: 'ws://127.0.0.1:18789', token: 't' }],
  ])('reports missing GATEWAY_URL for %s', (_name, input) => {
    // An explicit setting wins even when it is wrong: the operator must see it, not a silent fallback.
    expect(resolveGatewayConfig(input, { GATEWAY_URL: 'http://env:1' }, tokenFile).status).toBe(
      'missing GATEWAY_URL',
    );
  });

  it('reports missing GATEWAY_TOKEN when no source has one, and an empty token setting falls through', () => {
    expect(resolveGatewayConfig({ url: 'http://h:1', token: '' }, {}, noFile).status).toBe(
      'missing GATEWAY_TOKEN',
    );
    expect(resolveGatewayConfig({ token: '' }, { GATEWAY_TOKEN: 'e' }, noFile).config.token).toBe('e');
  });

  it('replaces an invalid timeout or an empty model with the defaults', () => {
    const resolved = resolveGatewayConfig({ model: ' ', timeoutMs: -5, token: 't' }, {}, noFile);
    expect(resolved.config).toMatchObject({ model: 'openclaw', timeoutMs: 120_000 });
  });
});

describe('readOpenClawConfig', () => {
  it.each([
    ['token mode', { mode: 'token', token: 'tk', password: 'pw' }, 'tk'],
    ['password mode', { mode: 'password', token: 'tk', password: 'pw' }, 'pw'],
    ['no mode, a token', { token: 'tk' }, 'tk'],
    ['no mode, a password', { password: 'pw' }, 'pw'],
    ['a mode without a shared secret', { mode: 'none', token: 'tk' }, undefined],
    ['token mode without a token', { mode: 'token', password: 'pw' }, undefined],
  ])('%s', (_name, auth, token) => {
    const path = openclawFile(JSON.stringify({ gateway: { auth } }));
    expect(readOpenClawConfig(path, {}).token).toBe(token);
  });

  it('substitutes ${VAR} from the environment, keeps $${VAR} literal, and drops unset references', () => {
    const path = (token: string) => openclawFile(JSON.stringify({ gateway: { auth: { token } } }));
    expect(readOpenClawConfig(path('${OC_TOKEN}'), { OC_TOKEN: 'from-env' }).token).toBe('from-env');
    expect(readOpenClawConfig(path('$${OC_TOKEN}'), { OC_TOKEN: 'x' }).token).toBe('${OC_TOKEN}');
    expect(readOpenClawConfig(path('${OC_TOKEN}'), {}).token).toBeUndefined();
  });

  it.each([0, 70_000, 'x', 18.5])('ignores an invalid port %s', (port) => {
    expect(readOpenClawConfig(openclawFile(JSON.stringify({ gateway: { port } })), {}).url).toBeUndefined();
  });
});
