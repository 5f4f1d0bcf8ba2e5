import type { AgentBridgeApp } from '../app.js';
import type { A2ACredentials } from '../mcp/a2a-credentials.js';
import type { ConsoleTokenResponse, StatusResponse } from '../protocol/console-api.js';
import type { EventStreams } from './events-stream.js';
import type { McpConsole } from './mcp-console.js';
import type { ConsoleSettings } from './settings-api.js';
import type { StatusCore } from './status.js';
import type { TrafficLog } from './traffic-log.js';

/** What the console's route files share: the app, the traffic log, the event streams and the console's own parts. */
export interface ApiDeps {
  app: AgentBridgeApp;
  log: TrafficLog;
  events: EventStreams;
  settings: ConsoleSettings;
  mcp: McpConsole;
  /** Credentials kept for A2A agents the operator's agent calls (write-only). */
  credentials: A2ACredentials;
  /** Replaces the console token (the old one stops working at once) and answers the new one. */
  consoleToken(): ConsoleTokenResponse;
  status(): StatusCore;
  tunnel(): StatusResponse['tunnel'];
  /** How long POST /api/gateway/check waits for its probe before answering "still checking" (202). */
  gatewayCheckWaitMs: number;
}
