// Issue 28, item 4: every call the bridge makes for its operator's agent carries its chain of calls, and an
// agent that knows nothing of it still takes the call: a SAMVAD agent built as the reference SDK is (it reads
// the envelope fields it knows), and an A2A agent on the A2A SDK's own server (the extension is neither
// declared on its card nor required). Both through the real MCP server, with the official MCP client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkA2AAgent, type SdkA2AAgent } from '../fixtures/a2a-sdk-agent.js';
import { startSdkAgent, type SdkAgent } from '../fixtures/sdk-agent.js';
import { startMcpBridge, type McpBridge } from '../helpers/mcp-bridge.js';
import { CHAIN_EXTENSION_URI, CHAIN_FIELD } from '../../src/protocol/index.js';

let mcp: McpBridge;
let samvad: SdkAgent;
let a2a: SdkA2AAgent;

beforeAll(async () => {
  mcp = await startMcpBridge({ outboundPerMinute: 10_000, outboundTimeoutMs: 5000 });
  samvad = await startSdkAgent();
  samvad.trustPeer(mcp.bridge.id, mcp.bridge.app.card().publicKeys.find((k) => k.active)?.key as string);
  a2a = await startSdkA2AAgent();
});

afterAll(async () => {
  await samvad.close();
  await a2a.close();
  await mcp.close();
});

describe('an agent that does not know the chain', () => {
  it('SAMVAD (built as the reference SDK): the envelope carries the chain, signed, and the call is answered', async () => {
    const answer = await mcp.tool('samvad_call', {
      agent: samvad.id,
      skill: 'echo',
      payload: { text: 'hello' },
    });
    expect(answer.isError).toBe(false);
    expect(answer.text).toMatch(/\{"echo":"hello"\}/);
    const sent = samvad.envelopes.at(-1) as Record<string, unknown>;
    expect(sent[CHAIN_FIELD]).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) as string, hop: 1 });
    // The operator's Traffic shows the chain it was sent with.
    expect(mcp.events.at(-1)).toMatchObject({ verdict: 'accepted', chain: sent[CHAIN_FIELD] });
  });

  it('A2A (the A2A SDK server): the message carries the chain under the extension, and is answered', async () => {
    const answer = await mcp.tool('a2a_send', { agent: a2a.url, message: 'hello there' });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('echo: hello there');
    const send = a2a.requests.find((request) => request.rpc === 'SendMessage');
    const message = (send?.body as { params: { message: Record<string, unknown> } }).params.message;
    expect(message.metadata).toEqual({
      [CHAIN_EXTENSION_URI]: { id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) as string, hop: 1 },
    });
    expect(message.extensions).toEqual([CHAIN_EXTENSION_URI]);
    expect(mcp.events.at(-1)).toMatchObject({
      protocol: 'a2a',
      verdict: 'accepted',
      chain: (message.metadata as Record<string, unknown>)[CHAIN_EXTENSION_URI],
    });
  });

  it('each call the operator starts is a chain of its own, at hop 1', async () => {
    await mcp.tool('samvad_call', { agent: samvad.id, skill: 'echo', payload: { text: 'again' } });
    const [first, second] = samvad.envelopes.slice(-2).map((env) => env[CHAIN_FIELD] as { id: string });
    expect(first?.id).not.toBe(second?.id);
  });
});
