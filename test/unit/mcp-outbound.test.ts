import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileFilter, parseTrafficQuery } from '../../src/console/traffic-filter.js';
import { stepForCode } from '../../src/mcp/callee-answers.js';
import {
  OutboundError,
  OutboundRateWindow,
  checkOutboundPolicy,
  parseA2AAgent,
  parseAgentRef,
  type OutboundSettings,
} from '../../src/mcp/outbound-policy.js';
import { addCommand, readMcpListing, setCommand, toolPolicySnippet } from '../../src/mcp/openclaw-setup.js';
import { signatureNote, withReply } from '../../src/mcp/reply-signature.js';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { parseServeArgs } from '../../src/settings/flags.js';
import { DEFAULT_SETTINGS } from '../../src/settings/schema.js';

const settings = (change: Partial<OutboundSettings> = {}): OutboundSettings => ({
  outbound: 'any',
  outboundAllowed: [],
  outboundPerMinute: 30,
  outboundTimeoutMs: 45_000,
  outboundMaxReplyBytes: 262_144,
  outboundRequireSignedReplies: false,
  devHttpPeers: false,
  keepMessageContents: false,
  ...change,
});

function refusal(run: () => unknown): OutboundError {
  try {
    run();
  } catch (error) {
    if (error instanceof OutboundError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('what the model may name as an agent', () => {
  it('takes agent ids and https base URLs (the card path too), lower-cased', () => {
    expect(parseAgentRef('agent://Weather.Example.com', false)).toBe('agent://weather.example.com');
    expect(parseAgentRef(' https://weather.example.com/ ', false)).toBe('agent://weather.example.com');
    expect(parseAgentRef('https://weather.example.com:8443', false)).toBe('agent://weather.example.com:8443');
    expect(parseAgentRef('https://w.example/.well-known/agent.json', false)).toBe('agent://w.example');
  });

  it('refuses plain http (loopback only with devHttpPeers), paths, credentials and non-ids', () => {
    expect(refusal(() => parseAgentRef('http://weather.example.com', true)).message).toMatch(/not https/);
    expect(refusal(() => parseAgentRef('http://127.0.0.1:9000', false)).verdict).toBe('access');
    expect(parseAgentRef('http://127.0.0.1:9000', true)).toBe('agent://127.0.0.1:9000');
    expect(refusal(() => parseAgentRef('https://w.example/api/chat', false)).message).toMatch(
      /root of their host/,
    );
    expect(refusal(() => parseAgentRef('https://user:pw@w.example', false)).message).toMatch(
      /without credentials/,
    );
    expect(refusal(() => parseAgentRef('agent://bad host', false)).message).toMatch(/not an agent id/);
    expect(refusal(() => parseAgentRef('weather', false)).message).toMatch(/neither an agent id nor a URL/);
  });
});

describe('what the model may name as an A2A agent', () => {
  it('takes an https base URL (or its card URL): the origin requests go to, and the id of its host', () => {
    expect(parseA2AAgent(' https://Agent.Example.com/ ', false)).toEqual({
      origin: 'https://agent.example.com',
      agentId: 'agent://agent.example.com',
    });
    expect(parseA2AAgent('https://a.example:443/.well-known/agent-card.json', false)).toEqual({
      origin: 'https://a.example',
      agentId: 'agent://a.example',
    });
    expect(parseA2AAgent('https://a.example:8443', false).origin).toBe('https://a.example:8443');
    expect(parseA2AAgent('http://127.0.0.1:9000', true)).toEqual({
      origin: 'http://127.0.0.1:9000',
      agentId: 'agent://127.0.0.1:9000',
    });
  });

  it('refuses agent:// ids (SAMVAD), paths, plain http, credentials and what is no URL, saying what to use', () => {
    expect(refusal(() => parseA2AAgent('agent://a.example', false)).message).toMatch(
      /A2A agents are named by their https base URL \(https:\/\/host\), not by an agent:\/\/ id/,
    );
    expect(refusal(() => parseA2AAgent('https://a.example/a2a/jsonrpc', false)).message).toBe(
      "An A2A agent's card is at the root of its host (/.well-known/agent-card.json): use https://a.example, not a path.",
    );
    expect(refusal(() => parseA2AAgent('https://a.example/.well-known/agent.json', false)).message).toMatch(
      /not a path/,
    );
    expect(refusal(() => parseA2AAgent('http://a.example', true)).message).toMatch(/not https/);
    expect(refusal(() => parseA2AAgent('http://127.0.0.1:9000', false)).verdict).toBe('access');
    expect(refusal(() => parseA2AAgent('https://k:s@a.example', false)).message).toMatch(
      /without credentials/,
    );
    expect(refusal(() => parseA2AAgent('a.example', false)).message).toMatch(/is not a URL/);
  });
});

describe('the outbound policy', () => {
  it('allowlist entries name hosts: an https base URL and an agent:// id each allow that host, either protocol', () => {
    const listed = settings({
      outbound: 'allowlist',
      outboundAllowed: ['https://A2A.example/', 'agent://samvad.example', 'https://port.example:8443'],
    });
    expect(() => checkOutboundPolicy(listed, 'agent://a2a.example')).not.toThrow();
    expect(() => checkOutboundPolicy(listed, 'agent://samvad.example')).not.toThrow();
    expect(() => checkOutboundPolicy(listed, 'agent://port.example:8443')).not.toThrow();
    expect(refusal(() => checkOutboundPolicy(listed, 'agent://port.example')).status).toBe(403);
    expect(
      refusal(() => checkOutboundPolicy(listed, 'agent://b.example', 'https://b.example')).message,
    ).toMatch(/^https:\/\/b\.example is not on the operator's list/);
  });

  it('off refuses everything; allowlist only what it lists (any case)', () => {
    expect(
      refusal(() => checkOutboundPolicy(settings({ outbound: 'off' }), 'agent://a.example')),
    ).toMatchObject({
      verdict: 'access',
      status: 403,
    });
    const listed = settings({ outbound: 'allowlist', outboundAllowed: ['agent://A.example'] });
    expect(() => checkOutboundPolicy(listed, 'agent://a.example')).not.toThrow();
    expect(refusal(() => checkOutboundPolicy(listed, 'agent://b.example')).message).toMatch(
      /not on the operator's list/,
    );
    expect(() => checkOutboundPolicy(settings(), 'agent://b.example')).not.toThrow();
  });

  it('never private, link-local or (without devHttpPeers) loopback addresses: SSRF through the agent', () => {
    for (const id of [
      'agent://10.0.0.5',
      'agent://192.168.1.1:8443',
      'agent://169.254.169.254',
      'agent://printer.local',
      'agent://127.0.0.1:8787',
      'agent://localhost:8787',
      'agent://intranet',
    ]) {
      expect(refusal(() => checkOutboundPolicy(settings(), id)).verdict, id).toBe('access');
    }
    expect(() =>
      checkOutboundPolicy(settings({ devHttpPeers: true }), 'agent://127.0.0.1:8787'),
    ).not.toThrow();
    expect(() => checkOutboundPolicy(settings({ devHttpPeers: true }), 'agent://10.0.0.5')).toThrow(
      OutboundError,
    );
  });

  it('caps requests per minute over a sliding window, and says when the next one may go', () => {
    let now = 1_000_000;
    const window = new OutboundRateWindow(() => now);
    window.take(2);
    now += 20_000;
    window.take(2);
    const refused = refusal(() => window.take(2));
    expect(refused).toMatchObject({ verdict: 'rate-limit', status: 429 });
    expect(refused.message).toMatch(/allows 2 a minute .* Try again in 40 s/);
    now += 40_000;
    expect(() => window.take(2)).not.toThrow();
  });

  it("maps the callee's error codes to the step of its pipeline that refused", () => {
    expect(stepForCode('AUTH_FAILED', 401)).toBe('signature');
    expect(stepForCode('AUTH_FAILED', 403)).toBe('trust');
    expect(stepForCode('SCHEMA_INVALID', 413)).toBe('size');
    expect(stepForCode('SCHEMA_INVALID', 400)).toBe('input');
    expect(stepForCode('DELEGATION_EXCEEDED', 400)).toBe('delegation');
    expect(stepForCode('TOKEN_BUDGET_EXCEEDED', 429)).toBe('rate-limit');
    expect(stepForCode('REPLAY_DETECTED', 401)).toBe('nonce');
    expect(stepForCode(undefined, 502)).toBe('handler');
  });
});

describe("a callee reply's signature", () => {
  const verified = { verified: true, unsigned: false };
  const unsigned = { verified: false, unsigned: true };

  it('is unsigned once any reply of the call was, and refused unsigned when the operator requires signatures', () => {
    expect(withReply('agent://a.example', undefined, verified, false)).toBe('verified');
    expect(withReply('agent://a.example', undefined, unsigned, false)).toBe('unsigned');
    expect(withReply('agent://a.example', 'unsigned', verified, false)).toBe('unsigned');
    expect(withReply('agent://a.example', undefined, verified, true)).toBe('verified');
    const refused = refusal(() => withReply('agent://a.example', 'verified', unsigned, true));
    expect(refused.message).toMatch(/accepts only signed replies \(setting outboundRequireSignedReplies\)/);
    expect(refused.details).toMatchObject({ replySignature: 'unsigned', discarded: true });
    // A reply the client did not check never passes.
    const unchecked = refusal(() =>
      withReply('agent://a.example', undefined, { verified: false, unsigned: false }, false),
    );
    expect(unchecked.details.replySignature).toBe('failed');
  });

  it("says how an unsigned reply came, from the address the bridge derived (never the reply's words)", () => {
    expect(signatureNote('unsigned', 'agent://w.example', 'https://w.example')).toBe(
      "Reply signature: unsigned: this agent's software does not sign replies; it came over HTTPS from w.example.",
    );
    expect(signatureNote('unsigned', 'agent://w.example:8443', 'https://w.example:8443')).toMatch(
      /over HTTPS from w\.example:8443\.$/,
    );
    expect(signatureNote('verified', 'agent://w.example', 'https://w.example')).toBe(
      'Reply signature: verified against the card of agent://w.example.',
    );
  });
});

describe('connecting OpenClaw', () => {
  const url = 'http://127.0.0.1:8788/mcp';

  it('writes the exact openclaw mcp commands, with --timeout only when calls may outlast its 60 s', () => {
    expect(addCommand(url, 'TOKEN', 45_000)).toBe(
      "openclaw mcp add agent-bridge --url http://127.0.0.1:8788/mcp --transport streamable-http --header 'Authorization=Bearer TOKEN'",
    );
    expect(addCommand(url, 'TOKEN', 120_000)).toMatch(/ --timeout 130$/);
    expect(setCommand(url, 'TOKEN', 45_000)).toBe(
      `openclaw mcp set agent-bridge '{"url":"http://127.0.0.1:8788/mcp","transport":"streamable-http","headers":{"Authorization":"Bearer TOKEN"}}'`,
    );
    expect(setCommand(url, 'TOKEN', 120_000)).toContain('"requestTimeoutMs":130000');
  });

  it('denies the tools to the agent callers reach, by the names OpenClaw gives them', () => {
    expect(toolPolicySnippet('public')).toContain('      public: {');
    expect(toolPolicySnippet('public')).toContain('deny: ["agent-bridge__*"]');
    expect(toolPolicySnippet('my-agent')).toContain('"my-agent": {');
  });

  describe("reading the gateway's config", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-listing-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const listing = (text: string, env: NodeJS.ProcessEnv = {}) => {
      const path = join(dir, 'openclaw.json');
      writeFileSync(path, text);
      return readMcpListing(path, url, 'TOKEN', env);
    };

    it('cannot tell when the file is missing or broken', () => {
      expect(readMcpListing(join(dir, 'none.json'), url, 'TOKEN')).toBeUndefined();
      expect(listing('{ mcp: ')).toBeUndefined();
    });

    it('finds the entry by URL (localhost is the same address), and checks transport, token and enabled', () => {
      const entry = (server: object) => listing(JSON.stringify({ mcp: { servers: { bridge: server } } }));
      const good = { url: 'http://localhost:8788/mcp/', transport: 'streamable-http' };
      expect(entry(good)).toEqual({ listed: true, name: 'bridge' });
      expect(entry({ ...good, headers: { Authorization: 'Bearer TOKEN' } })).toEqual({
        listed: true,
        name: 'bridge',
      });
      expect(entry({ ...good, headers: { authorization: 'Bearer OLD' } })?.problem).toMatch(/another token/);
      expect(entry({ url, type: 'http' })?.problem).toBeUndefined();
      expect(entry({ url })?.problem).toMatch(/transport sse \(the default\)/);
      expect(entry({ ...good, enabled: false })?.problem).toMatch(/disabled/);
      expect(
        listing(
          JSON.stringify({ mcp: { servers: { b: { ...good, headers: { Authorization: 'Bearer ${T}' } } } } }),
          {
            T: 'OLD',
          },
        )?.problem,
      ).toMatch(/another token/);
    });

    it('names an entry for the bridge at another address', () => {
      const moved = listing(
        JSON.stringify({ mcp: { servers: { 'agent-bridge': { url: 'http://127.0.0.1:40000/mcp' } } } }),
      );
      expect(moved).toMatchObject({ listed: false, name: 'agent-bridge' });
      expect(moved?.problem).toMatch(
        /at http:\/\/127\.0\.0\.1:40000\/mcp, but .* is at http:\/\/127\.0\.0\.1:8788\/mcp/,
      );
      expect(listing('{ mcp: { servers: { docs: { url: "https://docs.example/mcp" } } } }')).toEqual({
        listed: false,
      });
    });
  });
});

describe('settings and filters', () => {
  it('has the outbound defaults and flags', () => {
    expect(DEFAULT_SETTINGS).toMatchObject({
      outbound: 'any',
      outboundAllowed: [],
      outboundPerMinute: 30,
      outboundRequireSignedReplies: false,
    });
    const parsed = parseServeArgs(
      [
        '--outbound',
        'allowlist',
        '--outbound-allowed',
        'agent://a.example, agent://b.example:8443',
        '--outbound-per-minute',
        '5',
        '--outbound-timeout',
        '20',
        '--outbound-require-signed-replies',
      ],
      {},
    );
    expect(parsed.overrides).toEqual({
      outbound: 'allowlist',
      outboundAllowed: ['agent://a.example', 'agent://b.example:8443'],
      outboundPerMinute: 5,
      outboundTimeoutMs: 20_000,
      outboundRequireSignedReplies: true,
    });
    expect(() => parseServeArgs(['--outbound', 'sometimes'], {})).toThrow(
      /--outbound: must be one of: any, allowlist, off/,
    );
    // A2A agents are listed by their https base URL, in one spelling.
    expect(
      parseServeArgs(['--outbound-allowed', 'https://A.example:443/,agent://B.example'], {}).overrides,
    ).toEqual({ outboundAllowed: ['https://a.example', 'agent://b.example'] });
    expect(() => parseServeArgs(['--outbound-allowed', 'https://a.example/api'], {})).toThrow(
      /agent ids like agent:\/\/example\.com or A2A base URLs like https:\/\/example\.com/,
    );
    expect(() => parseServeArgs(['--outbound-allowed', 'http://a.example'], {})).toThrow(/agent ids/);
  });

  it('filters traffic by direction (entries without one are calls in)', () => {
    expect(parseTrafficQuery(new URLSearchParams('direction=out')).filter).toEqual({ direction: 'out' });
    expect(() => parseTrafficQuery(new URLSearchParams('direction=up'))).toThrow(/Invalid traffic filter/);
    const base = {
      time: 't',
      endpoint: '/',
      signatureForm: 'headers',
      verdict: 'accepted',
      status: 200,
    } as const;
    const entries: TrafficEntry[] = [
      { ...base, id: 1, durationMs: 0, bytesIn: 0, bytesOut: 0 },
      { ...base, id: 2, durationMs: 0, bytesIn: 0, bytesOut: 0, direction: 'in' },
      {
        ...base,
        id: 3,
        durationMs: 0,
        bytesIn: 0,
        bytesOut: 0,
        direction: 'out',
        callee: 'agent://x.example',
      },
    ];
    const ids = (direction: 'in' | 'out') => entries.filter(compileFilter({ direction })).map((e) => e.id);
    expect(ids('in')).toEqual([1, 2]);
    expect(ids('out')).toEqual([3]);
    expect(entries.filter(compileFilter({ text: 'X.EXAMPLE' })).map((e) => e.id)).toEqual([3]);
  });
});
