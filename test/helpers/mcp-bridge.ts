import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { EnvelopeEvent } from '../../src/agent/events.js';
import { startConsole, type ConsoleHandle } from '../../src/console/console-server.js';
import type { Settings } from '../../src/settings/schema.js';
import { openSettingsStore } from '../../src/settings/store.js';
import { startAgent, tempDir, type TestAgent } from './agents.js';
import { mcpTransport } from './mcp-client.js';

export interface McpBridge {
  bridge: TestAgent;
  console: ConsoleHandle;
  /** Every outbound traffic event, as the app emits it to the log. */
  events: EnvelopeEvent[];
  /** The MCP client's transport (one session for every tool call). */
  transport: StreamableHTTPClientTransport;
  /** Calls a tool through the official MCP client; the text parts joined by newlines. */
  tool(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  /** The tools the server lists, with their input schemas. */
  listTools(): ReturnType<Client['listTools']>;
  close(): Promise<void>;
}

/** A bridge on loopback with its console and MCP server, and an MCP client connected with its token. */
export async function startMcpBridge(settings: Partial<Settings> = {}): Promise<McpBridge> {
  const bridge = await startAgent({
    settings: { consolePort: 0, outbound: 'any', devHttpPeers: true, ...settings },
  });
  const events: EnvelopeEvent[] = [];
  bridge.app.on('outbound', (event: EnvelopeEvent) => events.push(event));
  const con = await startConsole({
    app: bridge.app,
    store: openSettingsStore(bridge.dataDir),
    dataDir: bridge.dataDir,
    port: 0,
    staticDir: tempDir('mcp-ui-'),
  });
  const { token } = JSON.parse(readFileSync(join(bridge.dataDir, 'mcp.json'), 'utf8')) as { token: string };
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = mcpTransport(con.mcp.url, token);
  await client.connect(transport);
  return {
    bridge,
    console: con,
    events,
    transport,
    async tool(name, args) {
      const result = await client.callTool({ name, arguments: args });
      const text = (result.content as { text?: string }[]).map((part) => part.text ?? '').join('\n');
      return { isError: result.isError === true, text };
    },
    listTools: () => client.listTools(),
    async close() {
      await client.close();
      await con.close();
      await bridge.close();
    },
  };
}
