import type { Context } from 'koa';
import { signResponse, type Signer } from '../protocol/index.js';

/** Every JSON reply this agent sends is signed with Form A response headers (PROTOCOL.md §3). */
export function sendSigned(
  ctx: Context,
  signer: Signer,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): number {
  const body = Buffer.from(JSON.stringify(value));
  const signature = signResponse(signer, { status, body });
  ctx.status = status;
  ctx.set({
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Digest': signature['content-digest'],
    'Signature-Input': signature['signature-input'],
    Signature: signature.signature,
  });
  ctx.body = body;
  return body.length;
}
