import { join } from 'node:path';
import { TokenFile, type SavedToken } from '../lib/token-file.js';

export const MCP_FILE = 'mcp.json';

/** `<dataDir>/mcp.json` (0600): the MCP server's address and its long-lived token, for scripts and restarts. */
export type McpFile = SavedToken;

/**
 * The MCP token: it outlives the process, because the gateway's config holds it. A missing, unreadable or
 * malformed file gets a new token (and the operator sees in the console that the gateway's config must be
 * updated).
 */
export class McpToken extends TokenFile {
  constructor(dataDir: string) {
    super(join(dataDir, MCP_FILE));
  }
}
