/**
 * The call chain (issue 28, item 4): every call the bridge makes for its operator's agent says which chain of
 * agent-to-agent calls it belongs to and how many calls deep it is, so agents that call each other stop. Its
 * wire form in each protocol, in one place (docs/mcp.md "Chains of calls"):
 * - SAMVAD: the envelope field `x-agent-bridge-chain` = `{"id": "<chain id>", "hop": <n>}`. Receivers that
 *   do not know it read past it (the reference SDKs read the fields they know; so did this bridge before it).
 *   The request signature covers it: Form A's Content-Digest is over the whole body, Form B's canonical JSON
 *   over every field but `signature`.
 * - A2A: `message.metadata["<CHAIN_EXTENSION_URI>"]` = the same object, the URI in `message.extensions` and
 *   in the `A2A-Extensions` header, and declared in the card's `capabilities.extensions`.
 * Pure, and free of Node's modules (the console's UI type-checks against this folder).
 */
/** A chain of calls between agents: its id (who started it chose it) and this call's place in it (1: the first). */
export interface CallChain {
  id: string;
  hop: number;
}

/** The SAMVAD envelope field that carries the chain. */
export const CHAIN_FIELD = 'x-agent-bridge-chain';

/** The A2A extension (its metadata key in a message) that carries the chain. */
export const CHAIN_EXTENSION_URI = 'https://agentbridge.dev/a2a/extensions/call-chain/v1';

/** Above this a hop count is not a count but noise: refused as malformed, whatever the limit. */
export const MAX_HOP = 10_000;

/** A chain id: 8 to 64 letters, digits and `- _ . ~` (it is shown in logs and refusals). */
export const CHAIN_ID_PATTERN = '^[A-Za-z0-9._~-]{8,64}$';
const CHAIN_ID = new RegExp(CHAIN_ID_PATTERN);

/** The chain's JSON Schema, for the envelope's (envelope-schema.ts). */
export const chainSchema = {
  type: 'object',
  required: ['id', 'hop'],
  properties: {
    id: { type: 'string', pattern: CHAIN_ID_PATTERN },
    hop: { type: 'integer', minimum: 1, maximum: MAX_HOP },
  },
} as const;

/** The chain one call further on. */
export function nextHop(chain: CallChain): CallChain {
  return { id: chain.id, hop: chain.hop + 1 };
}

/**
 * The chain a value names: undefined when absent (null too), else `{id, hop}` copied out of it, or the
 * problem in words (what a refusal names) when it is not one.
 */
export function readChain(value: unknown): CallChain | undefined | { problem: string } {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return { problem: 'must be an object {id, hop}' };
  const { id, hop } = value as { id?: unknown; hop?: unknown };
  if (typeof id !== 'string' || !CHAIN_ID.test(id)) {
    return { problem: 'must have an id of 8 to 64 letters, digits, dots, dashes, underscores or tildes' };
  }
  if (typeof hop !== 'number' || !Number.isInteger(hop) || hop < 1 || hop > MAX_HOP) {
    return { problem: `must have a hop that is an integer from 1 to ${MAX_HOP}` };
  }
  return { id, hop };
}
