import { randomBytes } from 'node:crypto';
import { readJsonFile, writeFileAtomic } from './atomic-file.js';

/** A token file as saved (0600): the address the token opens and the token. */
export interface SavedToken {
  url: string;
  token: string;
}

// 32 random bytes, base64url (fits in `#token=...`): what newToken makes. Anything else in the file is not ours.
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A long-lived secret kept in the data dir beside the address it opens (`{url, token}`, 0600, written
 * atomically), so it outlives the process: the console's (an open tab keeps working after a restart) and
 * the MCP server's (the gateway's config holds it). A missing, unreadable or malformed file gets a new
 * token; `regenerate` replaces it when the operator asks.
 */
export class TokenFile {
  private current: string;
  private url: string;

  constructor(readonly path: string) {
    const saved = readSaved(path);
    this.current = saved?.token ?? newToken();
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
      `${JSON.stringify({ url, token: this.current } satisfies SavedToken, null, 2)}\n`,
      0o600,
    );
    this.url = url;
  }

  /**
   * Keeps the token but no longer names `url` (the server there stopped), so local tools see nothing runs
   * there; a file another process on the same data dir rewrote since keeps its own address.
   */
  forgetUrl(url: string): void {
    const saved = readSaved(this.path);
    if (saved?.url === url && saved.token === this.current) this.save('');
  }

  /** A new token, saved at once when an address is known; the old one stops working with this call. */
  regenerate(): string {
    this.current = newToken();
    if (this.url) this.save(this.url);
    return this.current;
  }
}

function readSaved(path: string): SavedToken | undefined {
  try {
    const saved = readJsonFile<Partial<SavedToken>>(path);
    if (!saved || typeof saved.token !== 'string' || !TOKEN.test(saved.token)) return undefined;
    return { token: saved.token, url: typeof saved.url === 'string' ? saved.url : '' };
  } catch {
    return undefined;
  }
}
