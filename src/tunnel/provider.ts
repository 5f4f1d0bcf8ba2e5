/** One open tunnel: its public URL, a way to close it, and a promise that settles when it breaks. */
export interface TunnelConnection {
  url: string;
  /** Resolves with the reason once the tunnel stops working by itself (never resolves after close()). */
  broken: Promise<Error>;
  close(): void;
}

/** A way to get a public URL for a local port: the built-in localtunnel client, or an operator's command. */
export interface TunnelProvider {
  readonly name: string;
  /** Whether open() can ask for a name (localtunnel's subdomain); a command takes the address it is given. */
  readonly asksForName: boolean;
  /** Opens a tunnel to `port`; rejects (never hangs: every step has a timeout) when it cannot. */
  open(port: number, options: { subdomain?: string; signal: AbortSignal }): Promise<TunnelConnection>;
}

/** A failure that retrying will not fix (bad settings): the supervisor stops with `failed`. */
export class TunnelConfigError extends Error {}

/**
 * The tunnel server could not be reached at all (no answer to its address request). `offline`: the network
 * itself is the trouble (its name does not resolve, no route), which a retry every 30 s does not change.
 * `hint` says what the operator can do about it.
 */
export class TunnelUnreachableError extends Error {
  constructor(
    message: string,
    readonly offline: boolean,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'TunnelUnreachableError';
  }
}

export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${Math.round(ms / 1000)} s`)),
      ms,
    );
    const onAbort = () => reject(new Error(`${what}: cancelled`));
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}
