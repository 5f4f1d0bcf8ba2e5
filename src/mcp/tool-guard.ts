/**
 * How every MCP tool ends, whatever protocol it speaks: its answer, or its refusal in the bridge's words
 * (an OutboundError, the callee's own words in blocks), or, for anything unexpected, a sentence that sends
 * the operator to the log; and in none of them a credential the bridge keeps for another agent.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OutboundError } from './outbound-policy.js';
import { toolResult } from './untrusted.js';

export type ToolGuard = (work: () => Promise<CallToolResult>) => Promise<CallToolResult>;

/**
 * `onError` hears what no tool result may say; `secrets` are masked in every result (a called agent may
 * echo a credential it was sent, and the model must never read one).
 */
export function toolGuard(onError: (error: unknown) => void, secrets: () => string[] = () => []): ToolGuard {
  return async (work) => {
    let result: CallToolResult;
    try {
      result = await work();
    } catch (error) {
      if (error instanceof OutboundError) {
        result = failureResult(error);
      } else {
        onError(maskedError(error, secrets()));
        result = toolResult({
          said: 'The bridge failed unexpectedly; the operator can see why in its log.',
          source: '',
          isError: true,
        });
      }
    }
    return masked(result, secrets());
  };
}

/**
 * The refusal in the bridge's words, with what it says of the reply's signature; the callee's own words in
 * blocks, unless its reply was discarded (a signature that did not check, or unsigned when refused).
 */
function failureResult(error: OutboundError): CallToolResult {
  const { discarded, replyNote, taskId, untrusted, agent } = error.details;
  const reply = discarded ? ' Nothing from the reply is shown.' : replyNote ? ` ${replyNote}` : '';
  const task = taskId ? ` taskId: ${taskId}.` : '';
  return toolResult({
    said: `${error.message}${reply}${task}`,
    source: agent ?? 'the other agent',
    parts: discarded ? [] : untrusted,
    isError: true,
  });
}

const HIDDEN = '[a credential the bridge keeps]';

function masked(result: CallToolResult, secrets: string[]): CallToolResult {
  if (secrets.length === 0) return result;
  const content = result.content.map((part) =>
    part.type === 'text' ? { ...part, text: mask(part.text, secrets) } : part,
  );
  return { ...result, content };
}

/** The operator's log (stderr) never holds a credential either: an error that quotes one is retold. */
function maskedError(error: unknown, secrets: string[]): unknown {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  const clean = mask(text, secrets);
  return clean === text ? error : new Error(clean);
}

/** The text with every secret (as sent, and as JSON writes it) replaced by a note that one was there. */
export function mask(text: string, secrets: readonly string[]): string {
  let clean = text;
  for (const secret of secrets)
    for (const form of [secret, JSON.stringify(secret).slice(1, -1)]) clean = clean.replaceAll(form, HIDDEN);
  return clean;
}
