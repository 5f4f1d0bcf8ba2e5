// What `serve` prints about what happens (envelopes, the access policy, new senders), as one line each:
// pure functions of the events, so the terminal's words can be tested without a process.
import type { EnvelopeEvent } from '../agent/events.js';
import { callerLabel } from './caller-label.js';
import type { AccessPolicy, KnockView, PendingSenderView } from '../protocol/console-api.js';

/** The banner's id: the agent's id, or, while the tunnel that gives it is not online, that it comes later. */
export function agentIdLine(id: string, waitingForTunnel: boolean): string {
  return waitingForTunnel
    ? '  Agent id:   waiting for the tunnel (the id is agent://<its public host>, printed once it is online)'
    : `  Agent id:   ${id}`;
}

export function describeAccess(policy: AccessPolicy): string {
  if (policy === 'pairing') return 'pairing: each new sender waits for your approval (console > Access)';
  if (policy === 'allowlist') return 'allowlist: only senders you approved reach the gateway';
  return 'open: WARNING, any agent that signs its envelope reaches your gateway agent';
}

/**
 * A new sender asks to talk to the agent (policy `pairing`). Its first message only when the operator keeps
 * message contents (`keepMessageContents`): this output may be kept in a log others read (a service's
 * journal), and the console's Access page shows the message to the operator anyway. The sender's id and
 * its card's name stay: they are what the operator approves, and public on its card.
 */
export function newSenderLine(pending: PendingSenderView, keepContents: boolean): string {
  const { sender, name, code, preview, note } = pending;
  const first = keepContents && preview ? `, first message: "${preview}"` : '';
  return (
    `Access: ${sender}${name ? ` ("${name}")` : ''} asks to talk to your agent (request ${code}${first}).` +
    `${note ? ` It was ${note}.` : ''} Approve or deny it on the console's Access page.`
  );
}

/**
 * An A2A caller without a key knocks (policy `pairing`). What it claims to be is its own words (shown as a
 * claim, one line); its message only when the operator keeps message contents, as for a new sender.
 */
export function newKnockLine(knock: KnockView, keepContents: boolean): string {
  const from = knock.via === 'local' ? 'this machine' : knock.address;
  const claims = knock.claimed.name ? ` (claims to be "${knock.claimed.name}")` : '';
  const first = keepContents ? `, first message: "${knock.preview}"` : '';
  return (
    `Access: an A2A agent without a key knocks from ${from}${claims} at skill ${knock.skill} ` +
    `(knock ${knock.code}${first}). Approve or deny it on the console's Access page.`
  );
}

export function formatEnvelope(e: EnvelopeEvent): string {
  const out = e.direction === 'out';
  const verdict = e.held ? 'held' : e.verdict === 'accepted' ? 'accepted' : `refused at ${e.verdict}`;
  const parts = [
    clock(e.time),
    ...(out ? ['out'] : []),
    String(e.status),
    verdict,
    e.mode ?? '-',
    e.skill ?? '-',
    // A call out names the agent called; a call in, its sender.
    out ? `-> ${e.callee ?? '-'}` : callerLabel(e),
    `${e.durationMs} ms`,
  ];
  if (out && e.replySignature) parts.push(REPLY_WORDS[e.replySignature]);
  if (e.code) parts.push(e.code);
  if (e.screen) parts.push(`[injection screen: ${e.screen.rule}]`);
  if (e.message && e.verdict !== 'accepted') parts.push(`"${e.message}"`);
  if (e.diagnosis) parts.push(`[${e.diagnosis}]`);
  return parts.join(' ');
}

export const clock = (iso: string) => iso.slice(11, 19);

const REPLY_WORDS: Record<NonNullable<EnvelopeEvent['replySignature']>, string> = {
  verified: 'reply verified',
  unsigned: 'reply unsigned',
  failed: 'reply NOT verified',
};
