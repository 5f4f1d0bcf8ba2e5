import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { TaskState, verifyAgentCardSignature, type AgentCard } from '@a2a-js/sdk';
import { startGatewayDouble, type GatewayDouble } from '../fixtures/gateway-double.js';
import { a2aClient, clientFactory } from '../helpers/a2a-agent.js';
import { asTask, replyText, send } from '../helpers/a2a-messages.js';
import { agentPool, type TestAgent } from '../helpers/agents.js';
import { until } from '../helpers/polling.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

// The real app's A2A front door over its life: push notifications by the webhook rules SAMVAD callbacks
// follow, an accepted task drained (not lost) at shutdown, the card signed again after a key rotation.
const TOKEN = 'gw-token-a2a-life';
let gateway: GatewayDouble;
let hooks: WebhookReceiver;
const agents = agentPool(() => ({ gatewayUrl: gateway.url, gatewayToken: TOKEN }));

beforeAll(async () => {
  gateway = await startGatewayDouble({ token: TOKEN });
  hooks = await startWebhookReceiver();
  // The SDK's verifier logs each signature it could not use (console.debug): expected, and noisy.
  vi.spyOn(console, 'debug').mockImplementation(() => undefined);
});

beforeEach(() => {
  gateway.set({ deltas: (reply) => reply.match(/[\s\S]{1,3}/gu) ?? [], deltaDelayMs: 0 });
  hooks.received.length = 0;
});

afterAll(async () => {
  await agents.closeAll();
  await hooks.close();
  await gateway.close();
});

async function keyFor(agent: TestAgent): Promise<string> {
  return (await agent.app.a2aKeys.issue({ name: 'Life' })).secret;
}

const push = (url: string) => ({
  tenant: '',
  id: '',
  taskId: '',
  url,
  token: 'receiver-token',
  authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
});

describe('push notifications', () => {
  it('reach a loopback receiver under --dev-http-peers, authenticated, ending with the final status', async () => {
    const agent = await agents.start({ settings: { devHttpPeers: true } });
    const client = await a2aClient(agent.url, await keyFor(agent), 'HTTP+JSON');
    const task = asTask(
      await client.sendMessage(
        send('notify me', { configuration: { taskPushNotificationConfig: push(hooks.url('a2a')) } }),
      ),
    );
    const final = (json: Record<string, unknown>) =>
      (json.statusUpdate as { status?: { state?: string } } | undefined)?.status?.state ===
      'TASK_STATE_COMPLETED';
    await until(() => hooks.received.some((post) => final(post.json)), 5000, 'the final notification');
    // A task's notifications go out in order: the task, the whole reply, and last the terminal status, once.
    const kinds = hooks.received.map((post) => Object.keys(post.json).join());
    expect(kinds).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
    expect(final(hooks.received.at(-1)!.json)).toBe(true);
    for (const post of hooks.received) {
      expect(post.headers.authorization).toBe('Bearer receiver-secret');
      expect(post.headers['x-a2a-notification-token']).toBe('receiver-token');
    }
    expect(JSON.stringify(hooks.received.map((post) => post.json))).toContain(task.id);
  });

  it('are refused for a loopback or private address without --dev-http-peers', async () => {
    const agent = await agents.start({ settings: { devHttpPeers: false } });
    const client = await a2aClient(agent.url, await keyFor(agent));
    const task = asTask(await client.sendMessage(send('no hooks')));
    await expect(
      client.createTaskPushNotificationConfig({ ...push(hooks.url('a2a')), taskId: task.id }),
    ).rejects.toThrow(/--dev-http-peers/);
    await expect(
      client.createTaskPushNotificationConfig({ ...push('https://10.0.0.8/hook'), taskId: task.id }),
    ).rejects.toThrow(/public address/);
    expect(hooks.received).toEqual([]);
  });
});

describe('shutdown', () => {
  it('drains an accepted task: it completes before the agent stops, and is served after a restart', async () => {
    const agent = await agents.start();
    const key = await keyFor(agent);
    const client = await a2aClient(agent.url, key);
    gateway.set({ deltas: () => ['still ', 'working ', 'on it'], deltaDelayMs: 250 });
    const submitted = asTask(
      await client.sendMessage(send('finish me', { configuration: { returnImmediately: true } })),
    );
    expect(submitted.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await agent.app.stop(5000);
    const again = await agents.start({ dataDir: agent.dataDir });
    const task = await (await a2aClient(again.url, key)).getTask({ tenant: '', id: submitted.id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(replyText(task)).toBe('still working on it');
  });
});

describe('the card', () => {
  it('is signed again after a key rotation, and verifies with the SDK against the published keys', async () => {
    const agent = await agents.start();
    const signedWith = async () => {
      const card = (await (
        await fetch(`${agent.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })
      ).json()) as { signatures: { protected: string; signature: string }[] };
      return decodeProtectedHeader(card.signatures[0]!).kid;
    };
    const verify = async () => {
      const keys = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      const verifier = verifyAgentCardSignature(async (kid) => {
        const key = keys.keys.find((k) => k.kid === kid);
        if (!key) throw new Error(`no published key ${kid}`);
        return key;
      });
      const client = await clientFactory(await keyFor(agent)).createFromUrl(agent.url);
      await client.getAgentCard(undefined, verifier as (card: AgentCard) => Promise<void>);
    };
    const before = await signedWith();
    expect(before).toBe(agent.app.keys.signer.kid);
    await verify();
    agent.app.keys.rotate();
    const after = await signedWith();
    expect(after).toBe(agent.app.keys.signer.kid);
    expect(after).not.toBe(before);
    await verify();
  });
});
