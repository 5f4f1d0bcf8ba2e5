import { agentHost, normalizeAgentId } from '../protocol/index.js';

/**
 * An entry of `outboundAllowed`: an agent:// id (SAMVAD) or an https:// base URL (A2A), in its one spelling
 * (the host as normalizeAgentId writes it, no trailing slash). Either names a host, for either protocol.
 */
export function normalizeOutboundTarget(entry: string): string {
  if (!/^https:\/\//i.test(entry)) return normalizeAgentId(entry);
  const id = normalizeAgentId(`agent://${entry.slice('https://'.length).replace(/\/$/, '')}`);
  return id.startsWith('agent://') ? `https://${id.slice('agent://'.length)}` : entry;
}

/** The host an `outboundAllowed` entry names, as an agent:// id (what the outbound policy compares). */
export function outboundTargetId(entry: string): string {
  const normalized = normalizeOutboundTarget(entry);
  return normalized.startsWith('https://') ? `agent://${normalized.slice('https://'.length)}` : normalized;
}

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
  // The schema's pattern has checked the shape: what agentHost refuses is a port outside 1-65535.
  const checkPort = (field: string, id: string) => {
    if (agentHost(id) === null) errors.push({ field, message: `${field}: ${id} has a port outside 1-65535` });
  };
  if (settings.allowedPeers) {
    for (const id of settings.allowedPeers) checkPort('allowedPeers', id);
    value.allowedPeers = [...new Set(settings.allowedPeers.map(normalizeAgentId))];
  }
  if (settings.outboundAllowed) {
    for (const entry of settings.outboundAllowed) checkPort('outboundAllowed', outboundTargetId(entry));
    value.outboundAllowed = [...new Set(settings.outboundAllowed.map(normalizeOutboundTarget))];
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
