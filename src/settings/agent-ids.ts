import { normalizeAgentId } from '../protocol/index.js';

/** The settings that hold agent ids, as lists. */
const ID_LISTS = ['allowedPeers', 'outboundAllowed'] as const;

/** The settings that hold agent ids (schema.ts's `Settings` has them; this file needs nothing else of it). */
interface IdSettings {
  allowedPeers?: string[];
  outboundAllowed?: string[];
  trustedPeerKeys?: Record<string, string>;
}

/**
 * Every agent id in `settings` in its one spelling (normalizeAgentId), as senders are compared: an id typed
 * agent://LocalHost:PORT must pin, allow or list agent://localhost:PORT, never be silently ignored (issue 15,
 * finding 8). Lists lose the duplicates this makes; two spellings of one id pinned with different keys are
 * an error, since either choice would ignore one of them.
 */
export function normalizeSettingIds<T extends IdSettings>(
  settings: T,
): { value: T; errors: { field: string; message: string }[] } {
  const value = { ...settings };
  const errors: { field: string; message: string }[] = [];
  for (const name of ID_LISTS) {
    const ids = settings[name];
    if (ids) value[name] = [...new Set(ids.map(normalizeAgentId))];
  }
  const pinned = settings.trustedPeerKeys;
  if (pinned) {
    const keys: Record<string, string> = {};
    const spelling: Record<string, string> = {};
    for (const [written, key] of Object.entries(pinned)) {
      const id = normalizeAgentId(written);
      if (Object.hasOwn(keys, id) && keys[id] !== key) {
        errors.push({
          field: 'trustedPeerKeys',
          message: `trustedPeerKeys: ${id} is pinned twice with different keys (as ${spelling[id]} and ${written}): keep the one you mean`,
        });
      }
      keys[id] ??= key;
      spelling[id] ??= written;
    }
    value.trustedPeerKeys = keys;
  }
  return { value, errors };
}
