import type { EnvelopeEvent } from '../agent/events.js';

/**
 * The caller of a call in, as the serve output prints it: an A2A key by its id and the name the operator gave
 * it, marked when it was revoked or had expired (the operator sees who still uses it); anyone else by its id
 * (a SAMVAD sender's name is what its own card claims).
 */
export function callerLabel(
  event: Pick<EnvelopeEvent, 'sender' | 'callerName' | 'keyStatus' | 'protocol'>,
): string {
  const { sender, callerName, keyStatus } = event;
  if (!sender) return '-';
  if (event.protocol !== 'a2a' || !callerName || !sender.startsWith('a2a-key:')) return sender;
  return `${sender} ("${callerName}"${keyStatus ? `, ${keyStatus} key` : ''})`;
}
