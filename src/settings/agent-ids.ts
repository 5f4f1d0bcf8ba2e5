import { agentHost, normalizeAgentId } from '../protocol/index.js';
import type { Settings, SettingsFieldError } from './schema.js';

/** The settings that hold agent ids, as lists. */
const ID_LISTS = ['allowedPeers', 'outboundAllowed'] as const;

/**
 * Every agent id in `settings` in its one spelling (normalizeAgentId), as senders are compared: an id typed
 * agent://LocalHost:PORT must pin, allow or list agent://localhost:PORT, never be silently ignored (issue 15,
 * finding 8). Lists lose the duplicates this makes; two spellings of one id pinned with different keys are
 * an error, since either choice would ignore one of them.
 */
export function normalizeSettingIds<T extends Partial<Settings>>(
  settings: T,
): { value: T; errors: SettingsFieldError[] } {
  const value = { ...settings };
  const errors: SettingsFieldError[] = [];
  // The schema's pattern has checked the shape: what agentHost refuses is a port outside 1-65535.
  const checkPort = (field: SettingsFieldError['field'], id: string) => {
    if (agentHost(id) === null) errors.push({ field, message: `${field}: ${id} has a port outside 1-65535` });
  };
  for (const name of ID_LISTS) {
    const ids = settings[name];
    if (!ids) continue;
    for (const id of ids) checkPort(name, id);
    value[name] = [...new Set(ids.map(normalizeAgentId))];
  }
  const pinned = settings.trustedPeerKeys;
  if (pinned) {
    const keys: Record<string, string> = {};
    const spelling: Record<string, string> = {};
    for (const [written, key] of Object.entries(pinned)) {
      checkPort('trustedPeerKeys', written);
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
