// The A2A anchor: the server a developer would write instead of running the bridge, on `@a2a-js/sdk` as
// its README's server section shows (express, `jsonRpcHandler`, `DefaultRequestHandler`,
// `InMemoryTaskStore`). Its executor sends the message text to the same gateway with a keep-alive
// `node:http` client and publishes the reply as a completed task. No keys, no persistence, no limits, no
// screen: what the bridge does beyond this is what the bench row's ratio prices.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AGENT_CARD_PATH, TaskState, type AgentCard, type Part } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

export interface SdkA2AServer {
  url: string;
  close(): Promise<void>;
}

/** The JSON-RPC path, the bridge's own, so that the load generator sends the same request to both. */
export const SDK_JSONRPC_PATH = '/a2a/jsonrpc';

export async function startSdkA2AServer(gatewayUrl: string, gatewayToken: string): Promise<SdkA2AServer> {
  const gateway = new URL('/v1/chat/completions', gatewayUrl);
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });
  const executor: AgentExecutor = {
    async execute(context: RequestContext, bus: ExecutionEventBus) {
      const text = context.userMessage.parts.map(partText).join('\n');
      const reply = await chat(gateway, gatewayToken, keepAlive, text);
      const { taskId, contextId } = context;
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_COMPLETED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          history: [context.userMessage],
          artifacts: [
            {
              artifactId: randomUUID(),
              name: 'reply',
              description: '',
              parts: [
                {
                  content: { $case: 'text', value: reply },
                  metadata: undefined,
                  filename: '',
                  mediaType: '',
                },
              ],
              metadata: undefined,
              extensions: [],
            },
          ],
          metadata: undefined,
        }),
      );
      bus.finished();
    },
    cancelTask: () => Promise.resolve(),
  };

  const app = express();
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const card = agentCard(url);
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
  app.use(
    SDK_JSONRPC_PATH,
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  server.keepAliveTimeout = 65_000;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        keepAlive.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const partText = (part: Part) => (part.content?.$case === 'text' ? part.content.value : '');

function agentCard(url: string): AgentCard {
  return {
    name: 'Minimal SDK agent',
    description: 'Forwards each message to the gateway.',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${url}${SDK_JSONRPC_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'chat', name: 'Chat', description: 'Chat with the model.', tags: ['chat'] }],
  } as AgentCard;
}

/** One OpenAI-style chat completion over the keep-alive agent: the reply's text. */
function chat(gateway: URL, token: string, agent: Agent, text: string): Promise<string> {
  const body = JSON.stringify({ model: 'openclaw', messages: [{ role: 'user', content: text }] });
  return new Promise((resolve, reject) => {
    const req = request(
      gateway,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              choices?: Array<{ message?: { content?: string } }>;
            };
            resolve(parsed.choices?.[0]?.message?.content ?? '');
          } catch (error) {
            reject(error as Error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
