import { join } from 'node:path';
import { readJsonFile } from '../lib/atomic-file.js';
import type { RedisRecords } from '../state/redis-records.js';
import { retireFile, type Replicated } from '../state/replica-sync.js';
import { REGISTRATION_FILE, type Registrar, type Registration } from './registration.js';

/** Where the Registrar keeps its record on Redis: one, shared by every replica. */
export function sharedRegistrationSave(records: RedisRecords): { save(record: Registration): void } {
  return { save: (record) => void records.save({ record: [{ key: 'current', value: record }] }) };
}

/** The registration as replicas share it (state/replica-sync.ts). */
export function replicatedRegistration(
  registrar: Registrar,
  records: RedisRecords,
  dataDir: string,
): Replicated {
  return {
    async reload() {
      const { record } = await records.load();
      registrar.replace(record?.[0] as Registration | undefined);
    },
    async importLocal() {
      const path = join(dataDir, REGISTRATION_FILE);
      const registered = readJsonFile<Registration>(path);
      const { record } = await records.load();
      if ((record ?? []).length === 0 && registered) {
        await records.save({ record: [{ key: 'current', value: registered }] });
        retireFile(path);
      }
    },
  };
}
