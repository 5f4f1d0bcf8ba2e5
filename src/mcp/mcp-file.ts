import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';

export const MCP_FILE = 'mcp.json';

/** `<dataDir>/mcp.json` (0600): the MCP server's address and its long-lived token, for scripts and restarts. */
export interface McpFile {
  url: string;
  token: string;
}

// 32 random bytes, base64url: what newMcpToken makes. Anything else in the file is not ours.
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newMcpToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The MCP token: unlike the console's, it outlives the process, because the gateway's config holds it. Kept
 * in mcp.json beside the URL; a missing, unreadable or malformed file gets a new token (and the operator
 * sees in the console that the gateway's config must be updated).
 */
export class McpToken {
  readonly path: string;
  private current: string;
  private url: string;

  constructor(dataDir: string) {
    this.path = join(dataDir, MCP_FILE);
    const saved = readSaved(this.path);
    this.current = saved?.token ?? newMcpToken();
    this.url = saved?.url ?? '';
  }

  get token(): string {
    return this.current;
  }

  /** The URL the file named before this run wrote it (empty when there was none). */
  get savedUrl(): string {
    return this.url;
  }

  /** Writes `{url, token}` atomically, 0600. */
  save(url: string): void {
    writeFileAtomic(
      this.path,
      `${JSON.stringify({ url, token: this.current } satisfies McpFile, null, 2)}\n`,
      0o600,
    );
    this.url = url;
  }

  /** A new token, saved at once; the old one stops working with this call. */
  regenerate(): string {
    this.current = newMcpToken();
    if (this.url) this.save(this.url);
    return this.current;
  }
}

function readSaved(path: string): Partial<McpFile> | undefined {
  try {
    const saved = readJsonFile<Partial<McpFile>>(path);
    if (!saved || typeof saved.token !== 'string' || !TOKEN.test(saved.token)) return undefined;
    return { token: saved.token, url: typeof saved.url === 'string' ? saved.url : '' };
  } catch {
    return undefined;
  }
}
