import type { Context } from 'koa';
import { ConsoleError } from './errors.js';

/** Console requests are small settings changes; anything bigger is a mistake or an attack. */
export const MAX_BODY_BYTES = 64 * 1024;

const tooLarge = () =>
  new ConsoleError(
    413,
    `The request body is larger than ${MAX_BODY_BYTES / 1024} KiB.`,
    'Send only the settings you change.',
  );

/** Refuses a declared body over the limit before anything is read. */
export function checkDeclaredLength(ctx: Context): void {
  const declared = Number(ctx.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    // The unread rest is not worth draining: close the connection after the answer.
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
}

/** The request body as parsed JSON; 400 when it is not JSON, 413 past MAX_BODY_BYTES. */
export async function readJson(ctx: Context): Promise<unknown> {
  checkDeclaredLength(ctx);
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(ctx.get('content-type'))) {
    throw new ConsoleError(400, 'The body must be JSON.', 'Send it with "Content-Type: application/json".');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      ctx.set('Connection', 'close');
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    // The parser's message quotes the text, which may hold a secret: say only what to do.
    throw new ConsoleError(400, 'The body is not valid JSON.', 'Send a JSON object such as {"rpm": 120}.');
  }
}
