import { join } from 'node:path';
import { readJsonFile, writeFileAtomic } from '../lib/atomic-file.js';
import type { AddressChangeView } from '../protocol/console-api.js';

/** `<dataDir>/tunnel.json`: the tunnel's last public URL, and a change of it the operator has not dismissed. */
export const TUNNEL_FILE = 'tunnel.json';

interface Saved {
  url?: string;
  change?: AddressChangeView;
}

/**
 * The tunnel's public address across restarts. It is the agent's id (`agent://<host>`), which other agents
 * approved and the registry lists: the supervisor asks for the same name again at every start, and a new
 * address is kept as a change until the operator dismisses it, so a restart in between does not hide it.
 */
export class AddressMemory {
  private readonly path: string;
  private saved: Saved;

  constructor(
    dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.path = join(dataDir, TUNNEL_FILE);
    this.saved = readSaved(this.path);
  }

  /** The address the tunnel had last, in this run or an earlier one. */
  get url(): string | undefined {
    return this.saved.url;
  }

  /** The latest change of address not dismissed yet. */
  get lastChange(): AddressChangeView | undefined {
    return this.saved.change;
  }

  /**
   * The tunnel is online at `url`: remembered. A change names the address just before it (what a restart
   * came back from), and while changes pile up undismissed, how many there were and the address the operator
   * last knew before them (approvals given to that id broke first). Coming back to that one clears it.
   */
  online(url: string, note?: string): void {
    const before = this.saved.url;
    if (url === before) return;
    const pending = this.saved.change;
    const known = pending ? (pending.known ?? pending.previous) : before;
    if (before === undefined || known === undefined || known === url) {
      this.save({ url });
      return;
    }
    const changes = (pending ? (pending.changes ?? 1) : 0) + 1;
    const change: AddressChangeView = {
      previous: before,
      url,
      at: new Date(this.now()).toISOString(),
      ...(note ? { note } : {}),
      ...(changes > 1 ? { changes, known } : {}),
    };
    this.save({ url, change });
  }

  /** The operator has seen the change. */
  dismiss(): void {
    if (this.saved.change) this.save({ url: this.saved.url });
  }

  private save(saved: Saved): void {
    this.saved = saved;
    writeFileAtomic(this.path, `${JSON.stringify(saved, null, 2)}\n`);
  }
}

// A file that is not what we wrote (edited by hand, truncated) is treated as no memory rather than a crash.
function readSaved(path: string): Saved {
  try {
    const saved = readJsonFile<Saved>(path);
    if (!saved || typeof saved !== 'object') return {};
    const url = typeof saved.url === 'string' ? saved.url : undefined;
    const change = saved.change;
    const valid =
      change !== undefined &&
      typeof change.previous === 'string' &&
      typeof change.url === 'string' &&
      typeof change.at === 'string' &&
      (change.changes === undefined || (Number.isInteger(change.changes) && change.changes >= 1)) &&
      (change.known === undefined || typeof change.known === 'string');
    return { ...(url ? { url } : {}), ...(valid ? { change } : {}) };
  } catch {
    return {};
  }
}
