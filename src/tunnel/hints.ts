// What the operator can do when the tunnel server cannot be reached: said once with the reason, in the
// terminal and on the console's Tunnel card (issue 26: offline, the reason alone came 33 times in 10 minutes).
import { TUNNEL_PRESETS } from './presets.js';

/** The longest wait between two tries while offline (the supervisor's backoff goes on doubling up to it). */
export const OFFLINE_MAX_MS = 300_000;

/** Error codes that mean this machine cannot reach the network or resolve the name, rather than a refusal. */
const OFFLINE_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN']);

export function isOfflineCode(code: string): boolean {
  return OFFLINE_CODES.has(code);
}

/** What to do about a tunnel server that cannot be reached (`code`: the network error's code). */
export function unreachableHint(host: string, code: string): string {
  const offline = isOfflineCode(code);
  const why = offline
    ? `This machine cannot reach ${host} (no network, or its name does not resolve): check its connection.`
    : code === 'ECONNREFUSED'
      ? `${host} refuses connections: it may be down, or \`--tunnel-host\` names the wrong server.`
      : `${host} cannot be reached (${code}).`;
  const retry = offline
    ? 'The agent keeps answering on this machine and tries again by itself, less often the longer it lasts ' +
      `(at most every ${OFFLINE_MAX_MS / 60_000} minutes).`
    : 'The agent keeps answering on this machine and tries again by itself.';
  const presets = TUNNEL_PRESETS.map((preset) => preset.label).join(', ');
  return (
    `${why} ${retry} To go without localtunnel: \`--tunnel none\`, with \`--public-url <its address>\` when ` +
    `the agent has one of its own; or a stable tunnel in the console's Settings > Tunnel (${presets}).`
  );
}
