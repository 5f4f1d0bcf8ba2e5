import { escapedLine, oneLine } from '../lib/text.js';
import { ProtocolError } from '../protocol/index.js';
import type { TrafficFile } from '../protocol/console-api.js';

/**
 * What a caller may send beside its text, whichever door it came through (A2A's file and data parts, SAMVAD
 * chat's `attachments`), as the gateway takes it: images as OpenAI `image_url` parts (data: URLs) within
 * OpenClaw's limits, text files and data inlined in the user message with their names, anything else refused
 * naming what is accepted. The bytes go to the gateway and nowhere else: Traffic gets names, types and sizes.
 */

/**
 * OpenClaw's limits on the chat endpoint's images (`docs/gateway/openai-http-api.md` in its npm package, and
 * its `resolveOpenAiChatCompletionsLimits`): 8 `image_url` parts from the latest user message, 10 MB each
 * (`images.maxBytes`), 20 MB decoded in all, in a request body of at most 20 MB. Past any of them the gateway
 * answers a bare 400 ("Invalid image_url content") or 413: the caller is told which limit instead.
 */
export const IMAGE_LIMITS = {
  count: 8,
  bytes: 10 * 1024 * 1024,
  totalBytes: 20 * 1024 * 1024,
  gatewayBodyBytes: 20 * 1024 * 1024,
} as const;

/** Room left in the gateway's body for the framing, the caller's text and the JSON around them. */
const GATEWAY_BODY_ROOM = 256 * 1024;

/** Text inlined from a message's files and data parts, together (OpenClaw's own bound on a file's text). */
export const FILE_TEXT_CHARS = 60_000;

/** Parts of one message (text, files, data): more are refused, whatever their size. */
export const MAX_PIECES = 32;

/** The images the gateway takes (OpenClaw's default list without HEIC/HEIF, which need a system converter). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/** What a card says callers may send (A2A input modes): text of any kind, JSON, and the images above. */
export const INPUT_MODES = [
  'text/plain',
  'text/markdown',
  'text/csv',
  'text/*',
  'application/json',
  ...IMAGE_TYPES,
] as const;

/** What is accepted, in the words every refusal of a type uses. */
export const ACCEPTED =
  'text; text files (text/*, application/json, Markdown, CSV) sent inline; images (PNG, JPEG, GIF, WebP) sent ' +
  'inline or, where the operator allows it, by https URL; and JSON data';

export type AttachmentBody = { bytes: Uint8Array } | { url: string } | { data: unknown };

/** A file or a piece of data, as the caller sent it. */
export interface Attachment {
  /** The caller's name for it ('' when it gave none). */
  name: string;
  /** The media type it declared ('' when none). */
  mediaType: string;
  body: AttachmentBody;
}

/** The caller's text, or one of its attachments, in the order sent. */
export type MessagePiece = string | Attachment;

/** An image for the gateway: its bytes as base64 once known (inline, or once fetched from `url`). */
export interface TurnImage {
  /** What Traffic shows of it (its type and size are filled in when it is fetched). */
  note: TrafficFile;
  base64: string;
  url?: string;
}

/** A message as the gateway takes it. */
export interface TurnContent {
  /** The caller's text, its text files and data inlined with their names, its images named. */
  text: string;
  images: TurnImage[];
  /** Every attachment, in order, as Traffic shows it. */
  files: TrafficFile[];
  /** Bytes of the attachments sent inline: images fetched by URL share the body limit with them. */
  inlineBytes: number;
}

export interface ContentRules {
  /** The operator's `fetchImageUrls`: images sent by URL are fetched; off, they are refused. */
  fetchImageUrls: boolean;
  /** Why a URL may not be fetched, by the rules that need no DNS (push notifications'), or undefined. */
  urlProblem(url: string): string | undefined;
}

/** Files inline only: an image sent by URL is refused (where no fetching is wired). */
export const INLINE_ONLY: ContentRules = { fetchImageUrls: false, urlProblem: () => undefined };

/**
 * A refusal of what a message carries: `type` (a kind of file this agent does not take: A2A's
 * ContentTypeNotSupported, SAMVAD's 415), `limit` (past a size or count: 413) or `form` (malformed: 400).
 */
export class ContentRefused extends ProtocolError {
  constructor(
    readonly kind: 'type' | 'limit' | 'form',
    message: string,
  ) {
    super('SCHEMA_INVALID', kind === 'type' ? 415 : kind === 'limit' ? 413 : 400, message, { step: 'input' });
  }
}

/** What Traffic shows of each attachment as the caller declared it: a refused message shows its files too. */
export function fileNotes(pieces: readonly MessagePiece[]): TrafficFile[] {
  const notes: TrafficFile[] = [];
  for (const piece of pieces.slice(0, MAX_PIECES)) {
    if (typeof piece === 'string') continue;
    const type = 'data' in piece.body ? 'application/json' : declaredType(piece.mediaType);
    notes.push(noteOf(piece, type, sizeOf(piece.body)));
  }
  return notes;
}

/**
 * The message as the gateway takes it, or a ContentRefused naming what is wrong and what is accepted. Images
 * sent by URL are left to fetch (`url`), after the caller's limits were checked (image-fetch.ts).
 */
export function turnContent(pieces: readonly MessagePiece[], rules: ContentRules): TurnContent {
  if (pieces.length > MAX_PIECES) {
    throw new ContentRefused('limit', `The message has ${pieces.length} parts; send at most ${MAX_PIECES}.`);
  }
  const blocks: string[] = [];
  const content: TurnContent = { text: '', images: [], files: [], inlineBytes: 0 };
  let fileText = 0;
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      blocks.push(piece);
      continue;
    }
    const kind = kindOf(piece);
    const named = displayName(piece.name);
    const body = piece.body;
    if (kind.kind === 'data') {
      const json = dataText(piece);
      fileText += json.length;
      content.inlineBytes += Buffer.byteLength(json);
      content.files.push(noteOf(piece, 'application/json', Buffer.byteLength(json)));
      blocks.push(`[data${named ? ` ${named}` : ''} (application/json):]\n${json}\n[end of data]`);
    } else if (kind.kind === 'text') {
      if (!('bytes' in body)) throw refusedUrl(piece, false);
      const text = utf8(piece, body.bytes);
      fileText += text.length;
      content.inlineBytes += body.bytes.length;
      content.files.push(noteOf(piece, kind.type, body.bytes.length));
      const name = named || '(unnamed)';
      blocks.push(
        `[file ${name} (${kind.type}, ${body.bytes.length} bytes):]\n${text}\n[end of file ${name}]`,
      );
    } else if ('bytes' in body) {
      const type = imageType(piece, body.bytes);
      const image = addImage(content, noteOf(piece, type, body.bytes.length), base64(body.bytes));
      content.inlineBytes += body.bytes.length;
      blocks.push(
        `[image ${content.images.length}${named ? ` ${named}` : ''} (${image.note.type}, attached)]`,
      );
    } else if ('url' in body) {
      if (!rules.fetchImageUrls) throw refusedUrl(piece, true);
      const problem = rules.urlProblem(body.url);
      if (problem) throw new ContentRefused('form', `Image URL refused: ${problem}`);
      const image = addImage(content, noteOf(piece, kind.type, 0), '');
      image.url = body.url;
      blocks.push(`[image ${content.images.length}${named ? ` ${named}` : ''} (attached, from a URL)]`);
    }
    if (fileText > FILE_TEXT_CHARS) {
      throw new ContentRefused(
        'limit',
        `The message's text files and data come to more than ${FILE_TEXT_CHARS} characters together; send less.`,
      );
    }
  }
  checkImages(content);
  content.text = blocks.join('\n\n');
  return content;
}

/**
 * The limits every image is held to, again once the ones sent by URL are fetched: OpenClaw's count, size
 * and total, and its request body (base64 is 4/3 of the bytes).
 */
export function checkImages(content: TurnContent): void {
  const { images } = content;
  if (images.length > IMAGE_LIMITS.count) {
    throw new ContentRefused(
      'limit',
      `The message has ${images.length} images; the gateway takes at most ${IMAGE_LIMITS.count} (OpenClaw's limit).`,
    );
  }
  let total = 0;
  let encoded = 0;
  for (const image of images) {
    if (image.note.bytes > IMAGE_LIMITS.bytes) {
      throw new ContentRefused(
        'limit',
        `Image ${quoted(image.note)} is ${image.note.bytes} bytes; the gateway takes at most ${IMAGE_LIMITS.bytes} bytes (10 MB) an image (OpenClaw's limit).`,
      );
    }
    total += image.note.bytes;
    encoded += image.base64.length;
  }
  if (total > IMAGE_LIMITS.totalBytes) {
    throw new ContentRefused(
      'limit',
      `The message's images come to ${total} bytes; the gateway takes at most ${IMAGE_LIMITS.totalBytes} bytes (20 MB) of images a message (OpenClaw's limit).`,
    );
  }
  if (encoded + GATEWAY_BODY_ROOM > IMAGE_LIMITS.gatewayBodyBytes) {
    throw new ContentRefused(
      'limit',
      `The message's images, encoded for the gateway, come to ${encoded} bytes; its request body takes at most ${IMAGE_LIMITS.gatewayBodyBytes} bytes (20 MB, OpenClaw's limit): send smaller images.`,
    );
  }
}

/** The images as the gateway takes them (bridge/gateway-client.ts), once every one sent by URL is fetched. */
export function chatImages(images: readonly TurnImage[]): { mediaType: string; base64: string }[] {
  return images.map((image) => ({ mediaType: image.note.type, base64: image.base64 }));
}

/** The kind of an image's bytes, by their signature (the gateway checks it too); undefined if none. */
export function sniffImage(bytes: Uint8Array): (typeof IMAGE_TYPES)[number] | undefined {
  const starts = (...values: number[]) => values.every((value, i) => bytes[i] === value);
  const ascii = (at: number, text: string) =>
    Buffer.from(bytes.subarray(at, at + text.length)).toString('latin1') === text;
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  return undefined;
}

type Kind = { kind: 'data' } | { kind: 'text'; type: string } | { kind: 'image'; type: string };

const EXTENSIONS: Record<string, string> = {
  txt: 'text/plain',
  text: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/**
 * What the attachment is taken as: its declared type, else its name's (or its URL's) extension, else its
 * bytes' signature. A URL of no known type can only be an image (nothing else is fetched): its bytes decide.
 */
function kindOf(piece: Attachment): Kind {
  const body = piece.body;
  if ('data' in body) return { kind: 'data' };
  let type = declaredType(piece.mediaType);
  if (type === '' || type === 'application/octet-stream') {
    const path = 'url' in body && URL.canParse(body.url) ? new URL(body.url).pathname : '';
    const extension = /\.([A-Za-z0-9]+)$/.exec(piece.name || path)?.[1]?.toLowerCase() ?? '';
    type = EXTENSIONS[extension] ?? ('bytes' in body ? (sniffImage(body.bytes) ?? '') : 'image/*');
  }
  if (type === 'image/*' && 'url' in body) return { kind: 'image', type: '' };
  if (isTextType(type)) return { kind: 'text', type };
  if ((IMAGE_TYPES as readonly string[]).includes(type)) return { kind: 'image', type };
  const named = displayName(piece.name);
  const what = type ? `"${escapedLine(type, 80)}"` : 'a file of no known type';
  throw new ContentRefused(
    'type',
    `This agent does not take ${what}${named ? ` (${named})` : ''}. It takes ${ACCEPTED}.`,
  );
}

function isTextType(type: string): boolean {
  return (
    /^text\/[\w.+-]+$/.test(type) || type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type)
  );
}

/** The declared media type without its parameters, in lower case ('' when none). */
function declaredType(mediaType: string): string {
  return (mediaType.split(';', 1)[0] ?? '').trim().toLowerCase();
}

/** An image's type as its bytes say (a declared PNG that is a JPEG is a JPEG, as the gateway decides). */
function imageType(piece: Attachment, bytes: Uint8Array): string {
  const type = sniffImage(bytes);
  if (type) return type;
  throw new ContentRefused(
    'form',
    `Image ${displayName(piece.name) || '(unnamed)'} is not a PNG, JPEG, GIF or WebP image (its bytes are none of these).`,
  );
}

function addImage(content: TurnContent, note: TrafficFile, data: string): TurnImage {
  const image: TurnImage = { note, base64: data };
  content.images.push(image);
  content.files.push(note);
  return image;
}

function refusedUrl(piece: Attachment, image: boolean): ContentRefused {
  const named = displayName(piece.name);
  const what = image ? 'images by URL' : 'text files by URL';
  const why = image ? ': its operator has not allowed fetching them' : '';
  return new ContentRefused(
    'type',
    `This agent does not take ${what}${why}${named ? ` (${named})` : ''}: send the file's bytes inline. It takes ${ACCEPTED}.`,
  );
}

/** A text file's text: UTF-8 only (a byte-order mark is dropped), so nothing is read as something else. */
function utf8(piece: Attachment, bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ContentRefused(
      'form',
      `File ${displayName(piece.name) || '(unnamed)'} is not UTF-8 text: send text files in UTF-8.`,
    );
  }
}

function dataText(piece: Attachment): string {
  const value = 'data' in piece.body ? piece.body.data : undefined;
  const json = value === undefined ? undefined : JSON.stringify(value);
  if (json === undefined) throw new ContentRefused('form', 'A data part holds no JSON value: send one.');
  return json;
}

function sizeOf(body: AttachmentBody): number {
  if ('bytes' in body) return body.bytes.length;
  if ('url' in body) return 0;
  return Buffer.byteLength(JSON.stringify(body.data) ?? '');
}

function noteOf(piece: Attachment, type: string, bytes: number): TrafficFile {
  const note: TrafficFile = { name: escapedLine(piece.name, 120), type: escapedLine(type, 80), bytes };
  if ('url' in piece.body) note.fetched = true;
  return note;
}

/** How a refusal names a file from its note (whose name is escaped already). */
export function quoted(note: TrafficFile): string {
  return note.name ? `"${note.name}"` : '(unnamed)';
}

/** The caller's name for a file as the gateway reads it: quoted (JSON), one line, cut short; '' for none. */
function displayName(name: string): string {
  const line = oneLine(name, 100);
  return line ? JSON.stringify(line) : '';
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
}
