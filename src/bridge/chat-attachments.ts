import {
  ACCEPTED,
  ContentRefused,
  fileNotes,
  IMAGE_LIMITS,
  MAX_PIECES,
  turnContent,
  type MessagePiece,
  type TurnContent,
} from '../calls/attachments.js';
import type { AttachmentRules } from '../calls/image-fetch.js';
import type { TrafficFile } from '../protocol/console-api.js';

/**
 * SAMVAD chat's `attachments`: what an A2A message carries as file and data parts, in a field of the skill's
 * payload. PROTOCOL.md §2 and §4 make the payload whatever the skill's `inputSchema` says, validated at step
 * 7, and the card's schema leaves `inputSchema` to the skill: so the field is declared there, on the card,
 * and a caller that does not know it sends none (every field it knew keeps its meaning). Taken by the caller
 * core's rules (calls/attachments.ts), as A2A's parts are.
 */

/** At most this many attachments beside the message (a message and its files are at most MAX_PIECES parts). */
export const MAX_ATTACHMENTS = MAX_PIECES - 1;

/** The `attachments` property of the chat skills' input schema, as the card shows it. */
export const ATTACHMENTS_SCHEMA = {
  type: 'array',
  maxItems: MAX_ATTACHMENTS,
  description:
    `Files and data for the agent, each with exactly one of \`data\`, \`url\` or \`json\`. It takes ${ACCEPTED}. ` +
    `Text files are inlined in the message with their names (60,000 characters together); images go to the agent ` +
    `as images (at most ${IMAGE_LIMITS.count}, 10 MB each, 20 MB together); the request stays within the agent's ` +
    'body limit, images fetched by URL included. Each image counts 1,600 tokens against the daily budget until ' +
    'the gateway reports what the turn cost.',
  items: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string', maxLength: 255, description: 'The file name the agent sees.' },
      mediaType: {
        type: 'string',
        maxLength: 127,
        pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(\\s*;.*)?$',
        description:
          'Its media type (text/markdown, image/png...); without one, its name\u2019s extension or an image\u2019s bytes say.',
      },
      data: {
        type: 'string',
        contentEncoding: 'base64',
        pattern: '^[A-Za-z0-9+/]*={0,2}$',
        description: 'The file\u2019s bytes, in standard base64.',
      },
      url: {
        type: 'string',
        format: 'uri',
        pattern: '^https?://',
        maxLength: 2048,
        description: 'An image\u2019s https URL, fetched by the agent where its operator allows it.',
      },
      json: { description: 'Structured data: any JSON value, inlined in the message as JSON.' },
    },
  },
} as const;

// A payload's content is read up to three times per call (its budget estimate, the input step, the
// handler): worked out once per payload object.
const read = new WeakMap<object, TurnContent>();

/**
 * The message and its attachments as the turn takes them, or a ContentRefused (also for an attachment with
 * none or several of `data`, `url`, `json`). Undefined for a payload without attachments: its message alone.
 */
export function chatContent(
  payload: Record<string, unknown>,
  rules: AttachmentRules | undefined,
): TurnContent | undefined {
  if (payload.attachments === undefined) return undefined;
  const known = read.get(payload);
  if (known) return known;
  const content = turnContent(piecesOf(payload, true), {
    fetchImageUrls: rules?.fetchImageUrls ?? false,
    urlProblem: (url) => rules?.urlProblem(url),
  });
  read.set(payload, content);
  return content;
}

/** What Traffic shows of the attachments, as the caller declared them (a refused call's too). */
export function chatFiles(payload: Record<string, unknown>): TrafficFile[] {
  return payload.attachments === undefined ? [] : fileNotes(piecesOf(payload, false));
}

/** The message and each attachment, in order; `strict`: an attachment that is not one thing is refused. */
function piecesOf(payload: Record<string, unknown>, strict: boolean): MessagePiece[] {
  const pieces: MessagePiece[] = [typeof payload.message === 'string' ? payload.message : ''];
  const list: unknown[] = Array.isArray(payload.attachments) ? payload.attachments : [];
  list.forEach((item, index) => {
    const fields = (item ?? {}) as Record<string, unknown>;
    const name = typeof fields.name === 'string' ? fields.name : '';
    const mediaType = typeof fields.mediaType === 'string' ? fields.mediaType : '';
    const given = ['data', 'url', 'json'].filter((field) => fields[field] !== undefined);
    if (given.length !== 1) {
      if (!strict) return;
      throw new ContentRefused(
        'form',
        `payload.attachments.${index}: give exactly one of data (base64 bytes), url or json; it has ${given.length ? given.join(' and ') : 'none'}.`,
      );
    }
    if (typeof fields.data === 'string') {
      pieces.push({ name, mediaType, body: { bytes: Buffer.from(fields.data, 'base64') } });
    } else if (typeof fields.url === 'string') pieces.push({ name, mediaType, body: { url: fields.url } });
    else if (given[0] === 'json') pieces.push({ name, mediaType, body: { data: fields.json } });
  });
  return pieces;
}
