import type { AgentBridgeApp } from '../app.js';
import { McpToken } from '../mcp/mcp-file.js';
import {
  MCP_PATH,
  MCP_SERVER_NAME,
  MCP_TOOL_GLOB,
  addCommand,
  readMcpListing,
  setCommand,
  toolPolicySnippet,
} from '../mcp/openclaw-setup.js';
import type { McpResponse, McpStatusView } from '../protocol/console-api.js';

/**
 * The MCP server as the console shows it: its URL and whether the gateway's config lists it (status, never
 * the token), the token and the exact commands (GET /api/mcp), and a new token (POST /api/mcp/token).
 */
export class McpConsole {
  readonly token: McpToken;
  private url = '';
  private movedFrom: string | undefined;

  constructor(
    private readonly app: AgentBridgeApp,
    dataDir: string,
  ) {
    this.token = new McpToken(dataDir);
  }

  /**
   * The console listens at `consoleUrl` now: save mcp.json. When that is not the port the settings ask for
   * (it was busy), the gateway's config points elsewhere: `movedFrom` says where.
   */
  listening(consoleUrl: string, configuredPort: number): void {
    this.url = `${consoleUrl}${MCP_PATH}`;
    const actual = Number(new URL(consoleUrl).port);
    this.movedFrom =
      configuredPort !== 0 && actual !== configuredPort
        ? `http://127.0.0.1:${configuredPort}${MCP_PATH}`
        : undefined;
    this.token.save(this.url);
  }

  get currentUrl(): string {
    return this.url;
  }

  get moved(): string | undefined {
    return this.movedFrom;
  }

  status(): McpStatusView {
    const view: McpStatusView = {
      url: this.url,
      outbound: this.app.currentSettings.outbound,
      toolGlob: MCP_TOOL_GLOB,
      policySnippet: toolPolicySnippet(this.app.currentSettings.gatewayAgent),
    };
    if (this.movedFrom) view.movedFrom = this.movedFrom;
    const { path, env } = this.app.gateway.openclawConfig();
    const listing = readMcpListing(path, this.url, this.token.token, env);
    if (listing) view.listedInGatewayConfig = listing.listed;
    if (listing?.problem) view.gatewayConfigProblem = listing.problem;
    return view;
  }

  view(): McpResponse {
    const { token } = this.token;
    const timeout = this.app.currentSettings.outboundTimeoutMs;
    return {
      url: this.url,
      token,
      file: this.token.path,
      serverName: MCP_SERVER_NAME,
      command: addCommand(this.url, token, timeout),
      updateCommand: setCommand(this.url, token, timeout),
    };
  }

  /** A new token at once: the old one stops working, so the gateway's config must get the new one. */
  regenerate(): McpResponse {
    this.token.regenerate();
    return this.view();
  }
}
