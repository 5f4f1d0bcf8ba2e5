import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Skill } from '../../src/agent/skill.js';
import { ProtocolError, verifyObjectSignature } from '../../src/protocol/index.js';
import { startAgent, type TestAgent } from '../helpers/agents.js';
import { envelope, sign } from '../helpers/envelopes.js';
import { readSse, type SseBlock } from '../helpers/sse.js';

// Generic streaming is a property of the core, not of `chat`: these skills are the test's own.
let handlerAborted: Promise<void>;
let markAborted: () => void;

const counting: Skill = {
  id: 'count',
  name: 'Count',
  description: 'Streams numbers with a pause between them',
  inputSchema: {
    type: 'object',
    properties: { to: { type: 'integer', maximum: 20 }, pauseMs: { type: 'integer' } },
  },
  outputSchema: { type: 'object' },
  modes: ['sync', 'stream'],
  trust: 'public',
  handler: async ({ payload, emit, signal }) => {
    const to = (payload.to as number | undefined) ?? 3;
    for (let i = 1; i <= to; i++) {
      if (signal.aborted) {
        markAborted();
        throw signal.reason;
      }
      emit(String(i));
      await new Promise((resolve) => setTimeout(resolve, (payload.pauseMs as number | undefined) ?? 30));
    }
    return { counted: to };
  },
};

const failing: Skill = {
  id: 'fail',
  name: 'Fail',
  description: 'Fails in a chosen way',
  inputSchema: { type: 'object', properties: { how: { enum: ['protocol', 'crash'] } } },
  outputSchema: { type: 'object' },
  modes: ['sync', 'stream'],
  trust: 'public',
  handler: async ({ payload, emit }) => {
    emit('partial');
    if (payload.how === 'protocol') throw new ProtocolError('AGENT_UNAVAILABLE', 502, 'Upstream said no.');
    throw new Error('secret internal detail /home/operator/.openclaw');
  },
};

let agent: TestAgent;
let peer: TestAgent;

beforeAll(async () => {
  agent = await startAgent({ extraSkills: [counting, failing], keepAliveMs: 40 });
  peer = await startAgent();
});

afterAll(async () => {
  await agent.close();
  await peer.close();
});

function openStream(skill: string, payload: object, signal?: AbortSignal) {
  const signed = sign(envelope(peer.id, agent.id, 'stream', payload, { skill }), peer.app.keys.signer);
  return fetch(`${agent.url}/agent/stream`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
    signal,
  });
}

async function collect(response: Response): Promise<SseBlock[]> {
  const blocks: SseBlock[] = [];
  for await (const block of readSse(response)) blocks.push(block);
  return blocks;
}

const agentKey = (kid: string) => agent.app.keys.verificationKey(kid)!.key;

describe('generic streams', () => {
  it('sends the stream headers, each chunk as it is made, then a signed final event', async () => {
    const started = performance.now();
    const response = await openStream('count', { to: 3, pauseMs: 80 });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const blocks = (await collect(response)).filter((b) => !b.comment);
    expect(blocks.map((b) => b.data)).toEqual([
      { chunk: '1', done: false },
      { chunk: '2', done: false },
      { chunk: '3', done: false },
      expect.objectContaining({ done: true, result: { counted: 3 } }),
    ]);
    // The first chunk arrived long before the handler finished (3 pauses of 80 ms).
    expect(blocks[0]!.at - started).toBeLessThan(blocks[3]!.at - started - 120);
    expect(blocks.every((b) => b.event === undefined)).toBe(true);
    const final = blocks[3]!.data as Record<string, unknown>;
    expect(verifyObjectSignature(final, agentKey(final.kid as string))).toBe(true);
    expect(verifyObjectSignature({ ...final, result: { counted: 4 } }, agentKey(final.kid as string))).toBe(
      false,
    );
  });

  it('sends a keep-alive comment while nothing else flows', async () => {
    const blocks = await collect(await openStream('count', { to: 2, pauseMs: 150 }));
    expect(blocks.some((b) => b.comment === 'keep-alive')).toBe(true);
  });

  it('ends a failed stream with a signed error event; internal messages never reach the caller', async () => {
    const protocol = (await collect(await openStream('fail', { how: 'protocol' }))).filter((b) => !b.comment);
    expect(protocol.map((b) => b.data)).toEqual([
      { chunk: 'partial', done: false },
      expect.objectContaining({
        done: true,
        error: { code: 'AGENT_UNAVAILABLE', message: 'Upstream said no.' },
      }),
    ]);
    const final = protocol[1]!.data as Record<string, unknown>;
    expect(verifyObjectSignature(final, agentKey(final.kid as string))).toBe(true);

    const crash = (await collect(await openStream('fail', { how: 'crash' }))).filter((b) => !b.comment);
    const text = JSON.stringify(crash);
    expect(text).not.toMatch(/secret internal detail|openclaw/);
    expect(crash[1]!.data).toMatchObject({ done: true, error: { code: 'AGENT_UNAVAILABLE' } });
  });

  it('aborts the handler when the caller goes away', async () => {
    handlerAborted = new Promise((resolve) => (markAborted = resolve));
    const controller = new AbortController();
    const response = await openStream('count', { to: 20, pauseMs: 30 }, controller.signal);
    const reader = readSse(response);
    await reader.next();
    controller.abort();
    await expect(
      Promise.race([handlerAborted.then(() => 'aborted'), sleep(2000).then(() => 'still running')]),
    ).resolves.toBe('aborted');
  });

  it('a sync call to a crashing handler gets 500 AGENT_UNAVAILABLE without the internal message', async () => {
    const signed = sign(
      envelope(peer.id, agent.id, 'sync', { how: 'crash' }, { skill: 'fail' }),
      peer.app.keys.signer,
    );
    const response = await fetch(`${agent.url}/agent/message`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).toMatch(/AGENT_UNAVAILABLE/);
    expect(body).not.toMatch(/secret internal detail/);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
