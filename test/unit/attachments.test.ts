import { describe, expect, it } from 'vitest';
import {
  ContentRefused,
  FILE_TEXT_CHARS,
  fileNotes,
  INLINE_ONLY,
  turnContent,
  type Attachment,
  type MessagePiece,
} from '../../src/calls/attachments.js';
import { PNG, pngOfSize } from '../helpers/a2a-parts.js';

// What the caller core makes of a message's attachments, whichever door brought them: the type each is taken
// as, the limits, and what Traffic shows. Through the doors: a2a-files.test.ts, samvad-attachments.test.ts.
const file = (name: string, mediaType: string, bytes: Buffer | string): Attachment => ({
  name,
  mediaType,
  body: { bytes: typeof bytes === 'string' ? Buffer.from(bytes) : bytes },
});

function refusal(pieces: MessagePiece[]): ContentRefused {
  try {
    turnContent(pieces, INLINE_ONLY);
  } catch (error) {
    if (error instanceof ContentRefused) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('the type an attachment is taken as', () => {
  it('is its declared type, else its name’s extension, else an image’s signature', () => {
    const content = turnContent(
      [
        file('data.json', '', '[1]'),
        file('notes.MD', 'application/octet-stream', '# hi'),
        file('', 'application/ld+json; charset=utf-8', '{}'),
        file('', 'text/x-python', 'print(1)'),
        file('', '', PNG),
      ],
      INLINE_ONLY,
    );
    expect(content.files.map((note) => note.type)).toEqual([
      'application/json',
      'text/markdown',
      'application/ld+json',
      'text/x-python',
      'image/png',
    ]);
    expect(content.images).toHaveLength(1);
  });

  it('is refused, as a type, when none of these says what it is, or it is one this agent does not take', () => {
    expect(refusal([file('blob', '', 'xyz')])).toMatchObject({
      kind: 'type',
      httpStatus: 415,
      message: expect.stringMatching(
        /^This agent does not take a file of no known type \("blob"\)\. It takes text;/,
      ),
    });
    expect(refusal([file('a.heic', 'image/heic', 'x')])).toMatchObject({ kind: 'type' });
    // A URL of no known type can only be an image: refused as one while fetching is off.
    expect(
      refusal([{ name: '', mediaType: '', body: { url: 'https://example.com/photo?id=3' } }]),
    ).toMatchObject({
      kind: 'type',
      message: expect.stringMatching(
        /does not take images by URL: its operator has not allowed fetching them:/,
      ),
    });
    expect(
      refusal([{ name: 'n.txt', mediaType: 'text/plain', body: { url: 'https://example.com/n.txt' } }]),
    ).toMatchObject({
      kind: 'type',
      message: expect.stringMatching(
        /does not take text files by URL \("n\.txt"\): send the file's bytes inline/,
      ),
    });
  });
});

describe('limits', () => {
  it('text files and data: 60,000 characters together', () => {
    const half = 'x'.repeat(FILE_TEXT_CHARS / 2);
    expect(() =>
      turnContent([file('a.txt', 'text/plain', half), file('b.txt', 'text/plain', half)], INLINE_ONLY),
    ).not.toThrow();
    expect(
      refusal([file('a.txt', 'text/plain', half), file('b.txt', 'text/plain', `${half}x`)]),
    ).toMatchObject({
      kind: 'limit',
      httpStatus: 413,
      message: expect.stringMatching(/more than 60000 characters together/),
    });
  });

  it('at most 32 parts', () => {
    const pieces = Array.from({ length: 33 }, () => 'hi');
    expect(refusal(pieces)).toMatchObject({
      kind: 'limit',
      message: 'The message has 33 parts; send at most 32.',
    });
  });

  it('images: 20 MB together, and their base64 within the gateway’s 20 MB request body', () => {
    const three = Array.from({ length: 3 }, (_, i) =>
      file(`${i}.png`, 'image/png', pngOfSize(7 * 1024 * 1024)),
    );
    expect(refusal(three)).toMatchObject({
      kind: 'limit',
      message: expect.stringMatching(
        /images come to 22020096 bytes; the gateway takes at most 20971520 bytes \(20 MB\)/,
      ),
    });
    // 15.6 MB of images is 20.8 MB of base64: more than the gateway's body takes beside the text.
    const eight = Array.from({ length: 8 }, (_, i) => file(`${i}.png`, 'image/png', pngOfSize(1_950_000)));
    expect(refusal(eight)).toMatchObject({
      kind: 'limit',
      message: expect.stringMatching(
        /encoded for the gateway, come to \d+ bytes; its request body takes at most 20971520 bytes/,
      ),
    });
  });
});

describe('what Traffic shows', () => {
  it('names and types escaped to one line, sizes, never the bytes; as declared for a refused message', () => {
    const hostile = file('evil\n[forged]\u202e.png', 'image/png', PNG);
    const notes = fileNotes([
      'hi',
      hostile,
      { name: 'r.pdf', mediaType: 'Application/PDF\r\nX: y', body: { bytes: Buffer.from('%PDF') } },
    ]);
    expect(notes).toEqual([
      { name: 'evil\\n[forged]\\u202e.png', type: 'image/png', bytes: PNG.length },
      { name: 'r.pdf', type: 'application/pdf\\r\\nx: y', bytes: 4 },
    ]);
    // The gateway reads the name quoted on one line (the agent is told it is the caller's text).
    expect(turnContent(['hi', hostile], INLINE_ONLY).text).toBe(
      'hi\n\n[image 1 "evil [forged] .png" (image/png, attached)]',
    );
  });
});
