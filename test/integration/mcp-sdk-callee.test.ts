import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Mode } from '../../src/protocol/index.js';
import { startHostileAgent, type HostileAgent } from '../fixtures/hostile-agent.js';
import { startSdkAgent, type SdkAgent } from '../fixtures/sdk-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';
import { until } from '../helpers/polling.js';

// Issue 16, item 1: the operator's agent calls agents built with the protocol's own SDKs, which sign no
// reply, no 202 and no stream event (a stand-in that answers as the TypeScript SDK 0.7 does). Unsigned
// replies are used and said to be; with outboundRequireSignedReplies they are refused, naming the setting; a
// signature that is present but wrong is refused either way; a signed reply still verifies.

const MODES: Mode[] = ['sync', 'async', 'stream'];

let mcp: McpBridge;
const started: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  mcp = await startMcpBridge({ outboundTimeoutMs: 5000, outboundPerMinute: 10_000 });
});

afterEach(() =>
  mcp.bridge.app.updateSettings({ outboundRequireSignedReplies: false, outboundTimeoutMs: 5000 }),
);

afterAll(async () => {
  for (const agent of started) await agent.close();
  await mcp.close();
});

/** An SDK-built agent that knows the bridge (the SDK fetches no cards: its operator pins its callers). */
async function sdkAgent(forge = false): Promise<SdkAgent> {
  const agent = await startSdkAgent({ forge });
  const key = mcp.bridge.app.card().publicKeys.find((k) => k.active)?.key as string;
  agent.trustPeer(mcp.bridge.id, key);
  started.push(agent);
  return agent;
}

async function signedAgent(): Promise<HostileAgent> {
  const agent = await startHostileAgent();
  started.push(agent);
  return agent;
}

const call = (agent: { id: string }, mode: Mode, payload: Record<string, unknown> = { text: 'hello' }) =>
  mcp.tool('samvad_call', { agent: agent.id, skill: 'echo', payload, mode });

const unsignedNote = (agent: SdkAgent) =>
  `Reply signature: unsigned: this agent's software does not sign replies; it came over plain HTTP from ${new URL(agent.url).host} (a loopback test address).`;

describe('an agent built with the SDK (unsigned replies)', () => {
  it.each(MODES)(
    '%s: its answer is used and said to be unsigned; Traffic shows unsigned (a stream too, though its card lists keys)',
    async (mode) => {
      const agent = await sdkAgent();
      const answer = await call(agent, mode);
      expect(answer.isError).toBe(false);
      expect(answer.text).toContain(unsignedNote(agent));
      expect(answer.text).toMatch(/>>>\n\{"echo":"hello"\}\n<<<end untrusted/);
      if (mode === 'async') expect(answer.text).toMatch(/\(async\) \(task [0-9a-f-]{36}\)/);
      expect(mcp.events.at(-1)).toMatchObject({ mode, verdict: 'accepted', replySignature: 'unsigned' });
    },
  );

  it('a task followed with samvad_task: running with its progress, then done, each answer unsigned', async () => {
    const agent = await sdkAgent();
    mcp.bridge.app.updateSettings({ outboundTimeoutMs: 1000 });
    const slow = await call(agent, 'async', { text: 'later', waitMs: 1500 });
    expect(slow.text).toMatch(/still running after/);
    const taskId = /taskId: ([0-9a-f-]{36})\n/.exec(slow.text)?.[1] as string;
    const running = await mcp.tool('samvad_task', { agent: agent.id, taskId });
    expect(running.text).toContain(
      `Task ${taskId} on ${agent.id} is running (0% done): check again later. ${unsignedNote(agent)}`,
    );
    let done = running;
    await until(
      async () => /is done/.test((done = await mcp.tool('samvad_task', { agent: agent.id, taskId })).text),
      5000,
      'the task to finish',
      200,
    );
    expect(done.text).toContain(unsignedNote(agent));
    expect(done.text).toContain('{"echo":"later"}');
    expect(mcp.events.at(-1)).toMatchObject({
      endpoint: `/agent/task/${taskId}`,
      replySignature: 'unsigned',
    });
  });

  it.each(MODES)(
    '%s: its refusals (error{code, message}, unsigned) come back with its code and words',
    async (mode) => {
      const agent = await sdkAgent();
      const answer = await call(agent, mode, {});
      expect(answer.isError).toBe(true);
      // The SDK checks the input when the skill runs: after the 202 (the task fails), inside the stream (its
      // final event is the error, under HTTP 200).
      const expected = {
        sync: /refused the call with SCHEMA_INVALID \(HTTP 400\)\. Reply signature: unsigned/,
        async: /Task [0-9a-f-]{36} on .* failed with SCHEMA_INVALID\. Reply signature: unsigned/,
        stream: /refused the call with SCHEMA_INVALID\. Reply signature: unsigned/,
      };
      expect(answer.text).toMatch(expected[mode]);
      expect(answer.text).toMatch(
        /its error message written by another agent[\s\S]*>>>\n"text: Required"\n<<<end/,
      );
      expect(mcp.events.at(-1)).toMatchObject({ code: 'SCHEMA_INVALID', replySignature: 'unsigned' });

      const broken = await call(agent, mode, { text: 'x', fail: true });
      expect(broken.text).toMatch(/with AGENT_UNAVAILABLE/);
      expect(broken.text).toContain('"Error: the handler broke"');
    },
  );

  it('a caller it does not know is refused with AUTH_FAILED (401), as the SDK answers', async () => {
    const stranger = await startSdkAgent();
    started.push(stranger);
    const answer = await call(stranger, 'sync');
    expect(answer.text).toMatch(/refused the call with AUTH_FAILED \(HTTP 401\)/);
    expect(answer.text).toContain(`"Unknown sender: ${mcp.bridge.id}"`);
  });
});

describe('outboundRequireSignedReplies', () => {
  it.each(MODES)(
    '%s: an unsigned reply is refused, naming the setting, and nothing of it is shown',
    async (mode) => {
      const agent = await sdkAgent();
      mcp.bridge.app.updateSettings({ outboundRequireSignedReplies: true });
      const answer = await call(agent, mode);
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(
        /carries no signature \(its software does not sign replies\), and the operator accepts only signed replies \(setting outboundRequireSignedReplies\), so it was discarded\. Nothing from the reply is shown\./,
      );
      expect(answer.text).not.toContain('hello');
      expect(answer.text).not.toContain('<<<untrusted');
      expect(mcp.events.at(-1)).toMatchObject({
        mode,
        verdict: 'handler',
        status: 502,
        replySignature: 'unsigned',
      });
      // An async call stops at the unsigned 202: no poll follows.
      if (mode === 'async')
        expect(agent.requests.filter((r) => r.startsWith('GET /agent/task/'))).toEqual([]);
    },
  );

  it.each(MODES)('%s: a signed reply still verifies and is used', async (mode) => {
    const agent = await signedAgent();
    mcp.bridge.app.updateSettings({ outboundRequireSignedReplies: true });
    const answer = await call(agent, mode);
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(`Reply signature: verified against the card of ${agent.id}.`);
    expect(mcp.events.at(-1)).toMatchObject({ mode, verdict: 'accepted', replySignature: 'verified' });
  });
});

describe('a signature present but wrong', () => {
  it.each(MODES.flatMap((mode) => [false, true].map((required) => [mode, required] as const)))(
    '%s (outboundRequireSignedReplies %s): refused, nothing of it shown, Traffic failed',
    async (mode, required) => {
      const agent = await sdkAgent(true);
      mcp.bridge.app.updateSettings({ outboundRequireSignedReplies: required });
      const answer = await call(agent, mode);
      expect(answer.isError).toBe(true);
      expect(answer.text).toMatch(/did not verify against its card, so it was discarded: .*bad signature/);
      expect(answer.text).not.toContain('hello');
      expect(answer.text).not.toContain('<<<untrusted');
      expect(mcp.events.at(-1)).toMatchObject({ mode, verdict: 'handler', replySignature: 'failed' });
    },
  );
});
