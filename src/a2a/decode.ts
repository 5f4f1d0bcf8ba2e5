import { RequestMalformedError } from '@a2a-js/sdk/errors';

interface Codec<T> {
  fromJSON(json: unknown): T;
}

/**
 * Decodes ProtoJSON with the SDK's codec. The codecs read fields without checking their types, so a
 * `null` part or a number where an object belongs throws a TypeError: that is the caller's malformed
 * request (400 / -32602), not the agent's failure, and it must not fill the operator's log.
 */
export function decode<T>(codec: Codec<T>, json: unknown, what: string): T {
  try {
    return codec.fromJSON(json ?? {});
  } catch {
    throw new RequestMalformedError(
      `The ${what} does not have the A2A 1.0 shape; check it against the spec.`,
    );
  }
}
