import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { TASK_ID } from '../state/tasks.js';

/** A contextId becomes part of a gateway session key: bounded, printable, and the caller's own. */
const CONTEXT_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The SDK loads each referenced task (a store read) and prints each one it does not find, id and all, to the
 * operator's terminal (outside review, finding 4: 60,000 forged lines from one request). Our executor does
 * not read them; a few are plenty for any caller.
 */
export const MAX_REFERENCE_TASK_IDS = 16;

/**
 * The caller's text: every text part, joined by blank lines. The `chat` skill reads text, so a file or
 * data part is refused with ContentTypeNotSupported rather than dropped silently.
 */
export function messageText(message: Message | undefined): string {
  if (!message?.parts?.length) {
    throw new RequestMalformedError('The request has no message with parts: send one with a text part.');
  }
  if (message.role !== Role.ROLE_USER) {
    throw new RequestMalformedError('The message role must be ROLE_USER (v0.3: "user").');
  }
  const texts: string[] = [];
  for (const part of message.parts ?? []) {
    if (part.content?.$case !== 'text') {
      throw new ContentTypeNotSupportedError(
        'This agent reads text only: send the content as a text part (for a file, its text).',
      );
    }
    texts.push(part.content.value);
  }
  const text = texts.join('\n\n');
  if (text.trim() === '') throw new RequestMalformedError('The message has no text: add a text part.');
  return text;
}

/** Refuses a contextId the agent cannot use as (part of) a session key; an absent one is fine. */
export function checkContextId(contextId: string | undefined): void {
  if (!contextId) return;
  if (!CONTEXT_ID.test(contextId)) {
    throw new RequestMalformedError(
      'contextId must be 1 to 128 printable ASCII characters without spaces; leave it out to start a new conversation.',
    );
  }
}

/**
 * Refuses referenceTaskIds that could not name a task here: more than MAX_REFERENCE_TASK_IDS, or one not in
 * the form this agent gives task ids (a UUIDv4, as the SDK makes them). Checked before the SDK reads them.
 */
export function checkReferenceTaskIds(ids: unknown[] | undefined): void {
  if (!ids?.length) return;
  if (ids.length > MAX_REFERENCE_TASK_IDS) {
    throw new RequestMalformedError(
      `referenceTaskIds holds ${ids.length} ids; send at most ${MAX_REFERENCE_TASK_IDS}, each the id of one of your tasks here.`,
    );
  }
  const bad = ids.findIndex((id) => typeof id !== 'string' || !TASK_ID.test(id));
  if (bad >= 0) {
    throw new RequestMalformedError(
      `referenceTaskIds[${bad}] is not a task id of this agent: send ids as it gave them (lowercase UUIDs), at most ${MAX_REFERENCE_TASK_IDS}.`,
    );
  }
}

export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    mediaType: 'text/plain',
    filename: '',
    metadata: undefined,
  };
}

/** A message from this agent within a task (status messages: why it failed, that it was canceled). */
export function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
