import type { AgentExtension, Message } from '@a2a-js/sdk';
import { chainOf } from '../calls/hop-guard.js';
import { CHAIN_EXTENSION_URI, type CallChain } from '../protocol/index.js';

/**
 * The chain of calls an A2A message says it belongs to: its metadata under the call-chain extension's URI
 * (protocol/call-chain.ts), or undefined. A malformed one is refused (InvalidParams, naming the key).
 */
export function messageChain(message: Pick<Message, 'metadata'> | undefined): CallChain | undefined {
  const metadata = message?.metadata as Record<string, unknown> | undefined;
  return chainOf(metadata?.[CHAIN_EXTENSION_URI], `message.metadata["${CHAIN_EXTENSION_URI}"]`);
}

/** The extension as the card declares it (capabilities.extensions). */
export const CHAIN_EXTENSION: AgentExtension = {
  uri: CHAIN_EXTENSION_URI,
  description:
    'Call chains between agents: a message may carry {id, hop} in its metadata under this URI. A message whose ' +
    "hop is over this agent's limit, or that comes back on a chain this agent passed on, is refused; calls " +
    "this agent's own agent makes while answering continue the chain one hop further.",
  required: false,
  params: undefined,
};
