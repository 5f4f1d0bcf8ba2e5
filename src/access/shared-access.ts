import { join } from 'node:path';
import type { RedisRecords } from '../state/redis-records.js';
import { retireFile, type Replicated } from '../state/replica-sync.js';
import type { AccessControl } from './access-control.js';
import { ACCESS_FILE, readAccessFile, type AccessFile } from './access-store.js';

/** The access lists as records replicas share: one per sender in each list. */
export function accessLists(file: AccessFile) {
  return {
    approved: file.approved.map((record) => ({ key: record.sender, value: record })),
    pending: file.pending.map((record) => ({ key: record.sender, value: record })),
    denied: file.denied.map((record) => ({ key: record.sender, value: record })),
  };
}

/** Where AccessControl saves its lists on Redis instead of `access.json`. */
export function sharedAccessSave(records: RedisRecords): { save(file: AccessFile): void } {
  return { save: (file) => void records.save(accessLists(file)) };
}

/**
 * The access lists as replicas share them (state/replica-sync.ts). Held tasks are reconciled after each
 * reload: a replica's copy of a request may miss a task another replica held at the same moment.
 */
export function replicatedAccess(access: AccessControl, records: RedisRecords, dataDir: string): Replicated {
  return {
    async reload() {
      const since = access.store.changes;
      access.reload((await records.load()) as unknown as Partial<AccessFile>, since);
      await access.reconcileHeld();
    },
    async importLocal() {
      const path = join(dataDir, ACCESS_FILE);
      const file = readAccessFile(path);
      const lists = await records.load();
      if (
        Object.values(lists).every((list) => list.length === 0) &&
        file.approved.length + file.pending.length > 0
      ) {
        await records.save(accessLists(file));
        retireFile(path);
        console.error(
          `Agent: imported ${file.approved.length} approved senders from ${ACCESS_FILE} into Redis (the file is now ${ACCESS_FILE}.imported).`,
        );
      }
    },
  };
}
