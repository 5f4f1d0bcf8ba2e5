import { schemaInvalid } from '../protocol/index.js';
import { isKeyless } from './key-gate.js';

/**
 * Whose conversation a contextId names (security review, finding 3). The gateway session is (caller,
 * contextId). A key holder's contextId is its own to choose: nobody else is that caller. A keyless caller
 * (the `open` policy) is told apart by its address alone, and behind a tunnel every one of them is
 * 127.0.0.1: a name one of them chose ("support") would be every stranger's session too, to read or to
 * poison. So a keyless caller never names a conversation: it omits contextId, the SDK mints one (a random
 * UUID, told to that caller alone, with its task), and its tasks are marked as in a conversation minted here
 * (A2APart.mintedContext, in the data dir or on Redis, so every replica and a restarted agent know it). A
 * contextId it sends must find that mark under its address; any other is refused, not taken as a new
 * conversation: a caller that thinks it continues one must learn that it does not, and a task answering
 * under another contextId than the one sent would be a conversation the caller never named.
 * The binding lasts as long as the conversation's tasks are kept (taskRetentionHours, or until the address's
 * task cap drops them for room).
 */

const NOT_MINTED =
  'This contextId names no conversation this agent started for you. Without an A2A key, omit contextId to ' +
  'start a conversation; continue one with the contextId this agent returned (from the same address, ' +
  'while its tasks are kept).';

/** Whether `owner` holds a task in conversation `contextId` minted here (A2ATaskStore.hasMintedContext). */
export type MintedContexts = (owner: string, contextId: string) => Promise<boolean>;

/**
 * Whether the tasks of `owner` are in conversations minted here: a keyless caller's always are (the gate
 * admits its contextId only when it names one, `checkConversation`), so each of its tasks carries the mark.
 */
export function mintsContexts(owner: string): boolean {
  return isKeyless(owner);
}

/**
 * Refuses (400 SCHEMA_INVALID: InvalidParams on JSON-RPC) a keyless caller's contextId that names no
 * conversation minted here for it. A key holder's, or none, passes.
 */
export async function checkConversation(
  minted: MintedContexts,
  caller: string,
  contextId: string | undefined,
): Promise<void> {
  if (contextId === undefined || !mintsContexts(caller)) return;
  if (!(await minted(caller, contextId))) throw schemaInvalid(NOT_MINTED, 'input');
}
