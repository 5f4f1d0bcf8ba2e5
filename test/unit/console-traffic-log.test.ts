import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { ConsoleError } from '../../src/console/errors.js';
import { parseTrafficQuery } from '../../src/console/traffic-filter.js';
import { TrafficLog, type TrafficLogOptions } from '../../src/console/traffic-log.js';
import { HIDDEN_CHARS } from '../../src/lib/text.js';
import type { TrafficEntry } from '../../src/protocol/console-api.js';
import { tempDir } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';

const dirs: string[] = [];
const logs: TrafficLog[] = [];

afterEach(async () => {
  for (const log of logs.splice(0)) await log.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openLog(options: Partial<TrafficLogOptions> = {}): { log: TrafficLog; dir: string } {
  const dir = tempDir('console-traffic-');
  dirs.push(dir);
  const log = new TrafficLog({ dataDir: dir, ...options });
  logs.push(log);
  return { log, dir };
}

function event(fields: Partial<EnvelopeEvent> = {}): EnvelopeEvent {
  return {
    time: new Date().toISOString(),
    endpoint: '/agent/message',
    sender: 'agent://alice.example',
    skill: 'chat',
    mode: 'sync',
    signatureForm: 'headers',
    verdict: 'accepted',
    status: 200,
    durationMs: 12.5,
    bytesIn: 300,
    bytesOut: 200,
    traceId: 'trace-1',
    ...fields,
  };
}

const ids = (entries: TrafficEntry[]) => entries.map((entry) => entry.id);

describe('in memory', () => {
  it('keeps only the newest `capacity` entries, ids increasing, newest first', () => {
    const { log } = openLog({ capacity: 5 });
    for (let i = 0; i < 12; i++) log.add(event());
    expect(log.size).toBe(5);
    expect(log.lastId).toBe(12);
    expect(ids(log.query())).toEqual([12, 11, 10, 9, 8]);
    expect(ids(log.all())).toEqual([8, 9, 10, 11, 12]);
    expect(ids(log.query({}, 2))).toEqual([12, 11]);
  });

  it('keeps only TrafficEntry fields, whatever else an event carries', () => {
    const { log } = openLog();
    const leaky = {
      ...event({ preview: { payload: '{"message":"hi"}' } }),
      signature: 'sig1=:c2VjcmV0:',
      authorization: 'Bearer abc',
      privateKey: 'cHJpdmF0ZQ==',
    } as EnvelopeEvent;
    const entry = log.add(leaky);
    expect(Object.keys(entry).sort()).toEqual(
      [
        'id',
        'time',
        'endpoint',
        'sender',
        'skill',
        'mode',
        'signatureForm',
        'verdict',
        'status',
        'durationMs',
        'bytesIn',
        'bytesOut',
        'traceId',
        'preview',
      ].sort(),
    );
    expect(JSON.stringify(log.all())).not.toMatch(/c2VjcmV0|Bearer abc|cHJpdmF0ZQ/);
  });

  it('keeps every field an event carries, in memory and in the file', async () => {
    // Required<>: a field added to the event fails to compile here until this event carries it too.
    const full: Required<EnvelopeEvent> = {
      time: new Date().toISOString(),
      endpoint: '/agent/message',
      sender: 'agent://alice.example',
      skill: 'chat',
      mode: 'async',
      signatureForm: 'headers',
      verdict: 'accepted',
      status: 202,
      durationMs: 12.5,
      bytesIn: 300,
      bytesOut: 200,
      traceId: 'trace-1',
      code: 'AUTH_FAILED',
      message: 'a message',
      forwardedFor: '203.0.113.7',
      diagnosis: 'a diagnosis',
      taskId: 'task-1',
      preview: { payload: '{"message":"hi"}', reply: 'hello' },
      screen: { rule: 'ignore-instructions' },
      admittedBy: 'approved',
      held: true,
      direction: 'in',
      callee: 'agent://callee.example',
      replySignature: 'unsigned',
      onBehalfOf: 'agent://issuer.example',
      chain: { id: 'chain-0123456789', hop: 2 },
      protocol: 'a2a',
      a2a: {
        method: 'SendMessage',
        version: '0.3',
        transport: 'jsonrpc',
        taskState: 'completed',
        contextId: 'ctx-1',
        failedAt: 'limits',
      },
      callerName: 'Alice agent',
      keyStatus: 'revoked',
      passed: ['key', 'request'],
      files: [{ name: 'notes.md', type: 'text/markdown', bytes: 120 }],
    };
    const { log, dir } = openLog();
    expect(log.add(full)).toEqual({ id: 1, ...full });
    await log.flush();
    const line = readFileSync(join(dir, 'logs', 'traffic.jsonl'), 'utf8').trim();
    expect(JSON.parse(line)).toEqual({ id: 1, ...full });
  });

  it("writes a remote party's hidden characters escaped: one line per entry, the same JSON", async () => {
    // Issue 15: JSON escapes only C0; a line separator, NEL, a bidi override or a tag character in a sender's
    // text would end the line or reorder it in the terminal or editor the operator reads the log with.
    const hidden = 'agent://a\u2028FORGED\u0085b\u202eesrever\u{e0041}.example';
    const { log, dir } = openLog();
    log.add(event({ sender: hidden, callerName: `Alice\u2029\u200b\u009b` }));
    await log.flush();
    const text = readFileSync(join(dir, 'logs', 'traffic.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toMatch(new RegExp(HIDDEN_CHARS, 'u'));
    expect(JSON.parse(text)).toMatchObject({ sender: hidden, callerName: 'Alice\u2029\u200b\u009b' });
  });

  it('masks the secrets it is given wherever they appear, and cuts long texts', () => {
    const secret = 'gw-secret-token-0123456789';
    const { log } = openLog({ secrets: () => [secret, 'short'] });
    const entry = log.add(
      event({
        verdict: 'handler',
        status: 502,
        diagnosis: `the gateway refused token ${secret}`,
        preview: { payload: `{"message":"${secret}"}` },
        message: 'x'.repeat(5000),
      }),
    );
    expect(entry.diagnosis).toBe('the gateway refused token [secret]');
    expect(entry.preview?.payload).toBe('{"message":"[secret]"}');
    expect(entry.message!.length).toBeLessThan(2100);
    // Values under 8 characters are too common to mask.
    expect(log.add(event({ message: 'a short answer' })).message).toBe('a short answer');
  });

  it('notifies subscribers of each entry until they unsubscribe', () => {
    const { log } = openLog();
    const seen: number[] = [];
    const stop = log.subscribe((entry) => seen.push(entry.id));
    log.add(event());
    log.add(event());
    stop();
    log.add(event());
    expect(seen).toEqual([1, 2]);
  });
});

describe('filters', () => {
  const dir = tempDir('console-traffic-');
  const log = new TrafficLog({ dataDir: dir });
  afterAll(async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });
  log.add(event({ sender: 'agent://alice.example', status: 200 }));
  log.add(
    event({
      sender: 'agent://bob.example',
      verdict: 'signature',
      code: 'AUTH_FAILED',
      status: 401,
      message: 'Signature does not verify',
    }),
  );
  log.add(event({ sender: 'agent://bob.example', skill: 'echo', verdict: 'rate-limit', status: 429 }));
  log.add(
    event({
      sender: 'agent://carol.example',
      verdict: 'handler',
      status: 502,
      code: 'AGENT_UNAVAILABLE',
      diagnosis: 'Chat endpoint disabled',
      traceId: 'trace-XYZ',
    }),
  );
  log.add(event({ sender: undefined, signatureForm: 'none', verdict: 'shape', status: 400 }));

  it.each([
    [{}, [5, 4, 3, 2, 1]],
    [{ sender: 'BOB' }, [3, 2]],
    [{ skill: 'echo' }, [3]],
    [{ skill: 'ech' }, []],
    [{ verdict: 'accepted' }, [1]],
    [{ verdict: 'refused' }, [5, 4, 3, 2]],
    [{ verdict: 'signature' }, [2]],
    [{ status: '401' }, [2]],
    [{ status: '4xx' }, [5, 3, 2]],
    [{ status: '5XX' }, [4]],
    [{ text: 'chat endpoint' }, [4]],
    [{ text: 'auth_failed' }, [2]],
    [{ text: 'xyz' }, [4]],
    [{ sender: 'bob', status: '4xx', verdict: 'refused' }, [3, 2]],
  ])('%j matches %j', (filter, expected) => {
    expect(ids(log.query(filter))).toEqual(expected);
  });

  it('parses a query string, treating empty values as "any" and clamping the limit', () => {
    expect(parseTrafficQuery(new URLSearchParams('sender=bob&skill=&limit=99999'))).toEqual({
      filter: { sender: 'bob' },
      limit: 10_000,
    });
    expect(parseTrafficQuery(new URLSearchParams('')).limit).toBe(500);
  });

  it('refuses a bad filter naming each field', () => {
    let error: unknown;
    try {
      parseTrafficQuery(new URLSearchParams('verdict=maybe&status=4x&limit=-1'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConsoleError);
    expect((error as ConsoleError).status).toBe(400);
    expect((error as ConsoleError).fields?.map((f) => f.field)).toEqual(['verdict', 'status', 'limit']);
  });
});

describe('per-minute counters', () => {
  it('counts accepted and refused per minute over the last 15 minutes, oldest first, with totals', () => {
    let now = Date.parse('2026-11-25T10:00:30Z');
    const { log } = openLog({ now: () => now });
    log.add(event());
    log.add(event());
    log.add(event({ verdict: 'nonce', status: 409 }));
    now += 3 * 60_000;
    log.add(event({ verdict: 'trust', status: 403 }));

    let { perMinute, accepted, refused } = log.counters();
    expect(perMinute).toHaveLength(15);
    expect(perMinute.at(-1)).toEqual({ minute: '2026-11-25T10:03:00.000Z', accepted: 0, refused: 1 });
    expect(perMinute.at(-4)).toEqual({ minute: '2026-11-25T10:00:00.000Z', accepted: 2, refused: 1 });
    expect(perMinute[0]!.minute).toBe('2026-11-25T09:49:00.000Z');
    expect({ accepted, refused }).toEqual({ accepted: 2, refused: 2 });

    // Twenty minutes on, the window holds nothing, but the totals since start remain.
    now += 20 * 60_000;
    ({ perMinute, accepted, refused } = log.counters());
    expect(perMinute.every((m) => m.accepted === 0 && m.refused === 0)).toBe(true);
    expect({ accepted, refused }).toEqual({ accepted: 2, refused: 2 });
  });
});

describe('the log file', () => {
  it('is written in batches after the request, not during it, with mode 0600', async () => {
    const { log, dir } = openLog({ flushMs: 30 });
    const path = join(dir, 'logs', 'traffic.jsonl');
    log.add(event());
    expect(existsSync(path)).toBe(false);
    await until(() => existsSync(path) && readFileSync(path, 'utf8').endsWith('\n'), 2000, 'the flush');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ id: 1, verdict: 'accepted' });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    log.add(event());
    await log.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('rotates before passing the size limit and keeps three old files', async () => {
    const maxFileBytes = 2000;
    const { log, dir } = openLog({ maxFileBytes, flushBytes: 700 });
    for (let i = 0; i < 120; i++) log.add(event({ message: `entry ${i}` }));
    await log.flush();

    const logsDir = join(dir, 'logs');
    expect(readdirSync(logsDir).sort()).toEqual([
      'traffic.1.jsonl',
      'traffic.2.jsonl',
      'traffic.3.jsonl',
      'traffic.jsonl',
    ]);
    // Oldest file first: the ids run on without a gap and end with the newest entry.
    const files = ['traffic.3.jsonl', 'traffic.2.jsonl', 'traffic.1.jsonl', 'traffic.jsonl'];
    const kept: number[] = [];
    for (const name of files) {
      const path = join(logsDir, name);
      expect(statSync(path).size, name).toBeLessThanOrEqual(maxFileBytes);
      expect(statSync(path).mode & 0o777, name).toBe(0o600);
      const lines = readFileSync(path, 'utf8').trim().split('\n');
      kept.push(...lines.map((line) => (JSON.parse(line) as TrafficEntry).id));
    }
    expect(kept.at(-1)).toBe(120);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => kept[0]! + i));
    expect(kept[0]).toBeGreaterThan(1);
  });
});

describe('after a restart', () => {
  // Issue 26, item 8: the file held 8 lines and the console showed 1 envelope.
  it('shows the history the file kept, with its ids, and numbers new entries after it', async () => {
    const { log, dir } = openLog();
    for (let i = 0; i < 8; i++) log.add(event({ message: `before ${i}` }));
    await log.close();

    const again = new TrafficLog({ dataDir: dir });
    logs.push(again);
    expect(again.size).toBe(8);
    expect(ids(again.query())).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(again.query()[0]).toMatchObject({
      message: 'before 7',
      verdict: 'accepted',
      sender: 'agent://alice.example',
    });
    expect(again.add(event({ message: 'after' })).id).toBe(9);
    await again.close();

    // The file holds both runs once each, and a third start shows all nine.
    const lines = readFileSync(join(dir, 'logs', 'traffic.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((line) => (JSON.parse(line) as TrafficEntry).id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const third = new TrafficLog({ dataDir: dir });
    logs.push(third);
    expect(ids(third.all())).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('reads back across rotated files, newest first, no more than it keeps in memory', async () => {
    const { log, dir } = openLog({ maxFileBytes: 2000, flushBytes: 700 });
    for (let i = 0; i < 120; i++) log.add(event({ message: `entry ${i}` }));
    await log.close();
    const current = readFileSync(join(dir, 'logs', 'traffic.jsonl'), 'utf8')
      .trim()
      .split('\n').length;

    const again = new TrafficLog({ dataDir: dir, capacity: current + 5, maxFileBytes: 2000 });
    logs.push(again);
    // The current file's lines and the last five of the file before it.
    expect(ids(again.all())).toEqual(Array.from({ length: current + 5 }, (_, i) => 120 - current - 4 + i));
  });

  it('skips a torn last line and lines without the fields every entry has; ids keep increasing', () => {
    const dir = tempDir('console-traffic-');
    dirs.push(dir);
    const line = (id: number, fields: object = {}) =>
      JSON.stringify({ id, ...event({ message: `run entry ${id}` }), ...fields });
    // Two runs of an earlier version, each numbered from 1, then a write cut short.
    const text = [
      line(1),
      line(2),
      line(1, { sender: 42, preview: 'not an object' }),
      JSON.stringify({ id: 3, note: 'no verdict' }),
      '[1, 2]',
      line(2),
      line(3).slice(0, 40),
    ].join('\n');
    mkdirSync(join(dir, 'logs'));
    writeFileSync(join(dir, 'logs', 'traffic.jsonl'), text);

    const log = new TrafficLog({ dataDir: dir });
    logs.push(log);
    const entries = log.all();
    expect(ids(entries)).toEqual([1, 2, 3, 4]);
    // A field of the wrong type is dropped, not shown.
    expect(entries[2]).not.toHaveProperty('sender');
    expect(entries[2]).not.toHaveProperty('preview');
    expect(entries[2]).toMatchObject({ message: 'run entry 1', verdict: 'accepted' });
    expect(log.add(event()).id).toBe(5);
  });

  it("counts the kept entries of the last 15 minutes in the chart at their own time, not in this run's totals", async () => {
    let now = Date.parse('2026-11-25T10:00:30Z');
    const { log, dir } = openLog({ now: () => now });
    log.add(event({ time: new Date(now).toISOString() }));
    log.add(event({ time: new Date(now).toISOString(), verdict: 'nonce', status: 409 }));
    log.add(event({ time: new Date(now - 3600_000).toISOString() }));
    await log.close();

    now += 2 * 60_000;
    const again = new TrafficLog({ dataDir: dir, now: () => now });
    logs.push(again);
    const { perMinute, accepted, refused } = again.counters();
    expect(perMinute.at(-3)).toEqual({ minute: '2026-11-25T10:00:00.000Z', accepted: 1, refused: 1 });
    expect(perMinute.reduce((sum, m) => sum + m.accepted + m.refused, 0)).toBe(2);
    expect({ accepted, refused }).toEqual({ accepted: 0, refused: 0 });
  });
});
