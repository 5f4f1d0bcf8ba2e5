/**
 * Who called, as Traffic names the caller of a call in: an A2A key by the name the operator gave it (beside
 * its id), anyone else by its id.
 */
import type { TrafficEntry } from '../api/contract';

/** What a row without a caller says: an A2A call refused at its key had none the door could prove. */
export function unknownCaller(entry: Pick<TrafficEntry, 'protocol' | 'direction'>): string {
  return entry.protocol === 'a2a' && entry.direction !== 'out' ? 'no valid key' : 'unknown';
}

/**
 * The name the operator gave the A2A key a call came with; none for anyone else (a SAMVAD caller's name is
 * what its own card claims, so the row shows its id).
 */
export function keyName(entry: TrafficEntry): string | undefined {
  return entry.protocol === 'a2a' && entry.sender?.startsWith('a2a-key:') ? entry.callerName : undefined;
}
