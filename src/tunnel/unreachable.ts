/**
 * Why a call through the public URL did not reach this agent, and what the operator can do about it: one
 * wording for the Tunnel card, the self-test and the registry, so each failure names its own fix (issue 26,
 * item 9: "answered HTTP 408" alone told the operator nothing to do).
 */

export type UnreachableKind =
  | 'unresolved'
  | 'no-connection'
  | 'timeout'
  | 'tls'
  | 'redirect'
  | 'http-status'
  | 'not-a-card'
  | 'another-agent'
  | 'other-keys';

/** A failed reachability check: `detail` says what happened, `fix` what to do; the message holds both. */
export class UnreachableError extends Error {
  constructor(
    readonly kind: UnreachableKind,
    readonly detail: string,
    readonly fix: string,
  ) {
    super(`${detail}. ${fix}`);
    this.name = 'UnreachableError';
  }
}

const RESTART_TUNNEL = 'stop and start the tunnel (Overview → Tunnel)';
const CHECK_URL = 'if you set the public URL yourself (--public-url, or Settings → Tunnel), check it';

/** A connection that failed before any answer, by its code (ENOTFOUND, ECONNREFUSED, ...; never a message). */
export function networkFailure(target: string, code: string | undefined): UnreachableError {
  const said = code ?? 'network error';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new UnreachableError(
      'unresolved',
      `${target} did not answer: its name does not resolve (${said})`,
      `Check this machine's internet connection and DNS; ${CHECK_URL}`,
    );
  }
  if (code && /^(CERT_|ERR_TLS|ERR_SSL|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(code)) {
    return new UnreachableError(
      'tls',
      `${target} did not answer: its HTTPS certificate is not valid (${said})`,
      `Callers refuse that certificate too: give the address a valid certificate (tunnels bring one), or ${CHECK_URL}`,
    );
  }
  return new UnreachableError(
    'no-connection',
    `${target} did not answer: the connection failed (${said})`,
    `Whatever serves the public URL is not passing calls on: the agent reconnects the tunnel by itself after a second failed check; if it keeps failing, ${RESTART_TUNNEL}, or ${CHECK_URL}`,
  );
}

export function timedOut(target: string, seconds: number): UnreachableError {
  return new UnreachableError(
    'timeout',
    `${target} did not answer within ${seconds} s`,
    `The tunnel or this machine is slow or overloaded; the agent checks again by itself. If it keeps happening, ${RESTART_TUNNEL} or choose another provider in Settings → Tunnel`,
  );
}

export function redirected(target: string): UnreachableError {
  return new UnreachableError(
    'redirect',
    `${target} answered with a redirect`,
    `Callers do not follow a card's redirect: the public URL must serve the agent itself; ${CHECK_URL}`,
  );
}

/** Who answers with each status instead of the agent, and what to do about it. */
export function httpStatusFailure(target: string, status: number): UnreachableError {
  const answered = `${target} answered HTTP ${status}`;
  const fail = (why: string, fix: string) => new UnreachableError('http-status', `${answered}${why}`, fix);
  if (status === 408) {
    return fail(
      ' (Request Timeout): a server on the way, the tunnel’s or this agent’s port, stopped waiting for a request',
      `It is not a setting of yours: run the check again. If it keeps happening, ${RESTART_TUNNEL}`,
    );
  }
  if (status === 404) {
    return fail(
      ' (Not Found): no agent card there',
      `Something other than this agent answers at this address: ${RESTART_TUNNEL}, or ${CHECK_URL}`,
    );
  }
  if (status === 502 || status === 503 || status === 504) {
    return fail(
      ' from the tunnel server: it could not reach this agent',
      `The tunnel's connection to this machine is down or busy: the agent reconnects it by itself after a second failed check; if it keeps failing, ${RESTART_TUNNEL}`,
    );
  }
  if (status === 401 || status === 403 || status === 407 || status === 511) {
    return fail(
      ': a login or a warning page stands in front of the agent',
      'Callers cannot pass it either: choose a tunnel without one (Settings → Tunnel), or remove the login from your proxy',
    );
  }
  if (status === 429) {
    return fail(
      ' (Too Many Requests): the tunnel server limits calls',
      'Wait a minute and check again; if it keeps happening, choose another provider in Settings → Tunnel',
    );
  }
  if (status >= 500) {
    return fail(
      ': a server on the way failed',
      `Run the check again; if it keeps failing, ${RESTART_TUNNEL}`,
    );
  }
  return fail(
    ' instead of the agent card',
    `The public URL must reach this agent's port with nothing in front that answers for it: ${CHECK_URL}`,
  );
}

/** Something answered, but not with an agent card (too big, not JSON, cut off). */
export function notACard(detail: string): UnreachableError {
  return new UnreachableError(
    'not-a-card',
    detail,
    `Another server answers at this address: ${CHECK_URL}, or ${RESTART_TUNNEL}`,
  );
}

export function anotherAgent(detail: string): UnreachableError {
  return new UnreachableError(
    'another-agent',
    detail,
    `Another agent answers at this address (the tunnel server may have given the name to someone else): ${RESTART_TUNNEL} to get an address of its own, or ${CHECK_URL}`,
  );
}

export function otherKeys(detail: string): UnreachableError {
  return new UnreachableError(
    'other-keys',
    detail,
    'Another copy of this agent with other keys answers there (another machine, or a replica): stop it, or give every replica the same key file (--keys-file). Right after a key rotation, check again in a minute',
  );
}
