import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  ContentRefused,
  fileNotes,
  turnContent,
  type ContentRules,
  type MessagePiece,
  type TurnContent,
} from '../calls/attachments.js';
import type { TrafficFile } from '../protocol/console-api.js';
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
 * The message as the caller core takes it (calls/attachments.ts): its text parts joined by blank lines, its
 * text files and data parts inlined with their names, its images beside it (sent by URL: to fetch, where the
 * operator allows it). A kind of file this agent does not take is refused with ContentTypeNotSupported,
 * naming what it takes, rather than dropped silently; past a limit, or malformed, with the reason.
 */
export function messageContent(message: Message | undefined, rules: ContentRules): TurnContent {
  if (!message?.parts?.length) {
    throw new RequestMalformedError('The request has no message with parts: send one with a text part.');
  }
  if (message.role !== Role.ROLE_USER) {
    throw new RequestMalformedError('The message role must be ROLE_USER (v0.3: "user").');
  }
  let content: TurnContent;
  try {
    content = turnContent(messagePieces(message), rules);
  } catch (error) {
    if (error instanceof ContentRefused && error.kind === 'type') {
      throw new ContentTypeNotSupportedError(error.message);
    }
    throw error;
  }
  if (content.files.length === 0 && content.text.trim() === '') {
    throw new RequestMalformedError('The message has no text: add a text part.');
  }
  return content;
}

/** What Traffic shows of the message's files and data parts as sent, whether it is taken or not. */
export function messageFiles(message: Message | undefined): TrafficFile[] {
  try {
    return message?.parts?.length ? fileNotes(messagePieces(message)) : [];
  } catch {
    return [];
  }
}

/** Each part as the caller core takes it: text, a file (its bytes, or a URL) or data, in order. */
function messagePieces(message: Message): MessagePiece[] {
  return message.parts.map((part): MessagePiece => {
    const content = part.content;
    const file = { name: part.filename ?? '', mediaType: part.mediaType ?? '' };
    switch (content?.$case) {
      case 'text':
        return content.value;
      case 'raw':
        return { ...file, body: { bytes: content.value } };
      case 'url':
        return { ...file, body: { url: content.value } };
      case 'data':
        return { ...file, body: { data: content.value } };
      default:
        throw new RequestMalformedError('Each part holds text, raw bytes, a url or data: one holds none.');
    }
  });
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
