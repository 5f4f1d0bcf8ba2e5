import type { Settings } from '../settings/schema.js';
import { A2AKeyFile } from '../state/a2a-key-store.js';
import type { SharedState } from '../state/shared-state.js';
import { A2AKeys } from './a2a-keys.js';
import { AccessControl, type AccessChange, type AccessControlOptions } from './access-control.js';
import { sharedAccessSave } from './shared-access.js';

export type { A2AKeys, AccessControl };

export interface AppAccessOptions extends Pick<AccessControlOptions, 'isOwnId' | 'describe' | 'heldTasks'> {
  dataDir: string;
  settings(): Settings;
  /** State shared with other replicas (Redis), where the lists and the keys then live. */
  shared: SharedState | undefined;
  /** The skills there are (chat and the skills setting): a scope names only these. */
  skills(): string[];
  onChange(change: AccessChange): void;
  now: () => number;
  /** The pending list's bounds (tests use small ones). */
  limits?: { maxPending?: number; maxHeldPerSender?: number };
}

/**
 * The operator's consent, as the app keeps it: who may reach the gateway over SAMVAD (the access policy, its
 * lists and held requests), and the keys A2A callers present; in the data dir, or on Redis with replicas.
 */
export function appAccess(options: AppAccessOptions): { access: AccessControl; a2aKeys: A2AKeys } {
  const { dataDir, settings, shared, now } = options;
  // A decision made while Redis does not answer would hold at this replica only: refused, made again later.
  const unwritable = () => shared?.unwritable();
  const access = new AccessControl({
    dataDir,
    policy: () => settings().access,
    allowedPeers: () => settings().allowedPeers,
    isOwnId: options.isOwnId,
    describe: options.describe,
    expiryHours: () => settings().pendingExpiryHours,
    heldTasks: options.heldTasks,
    unwritable,
    shared: shared && sharedAccessSave(shared.access),
    onChange: options.onChange,
    skills: options.skills,
    now,
    ...options.limits,
  });
  const a2aKeys = new A2AKeys({
    records: shared?.a2aKeys ?? new A2AKeyFile(dataDir),
    unavailable: unwritable,
    onChange: () => options.onChange({ kind: 'changed' }),
    skills: options.skills,
    now,
  });
  return { access, a2aKeys };
}
