import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { signResponse, type Signer } from '../protocol/index.js';

/**
 * Every JSON reply this agent sends is signed with Form A response headers (PROTOCOL.md §3). The body is
 * sent as the very string that was digested: one serialisation, and Node writes it with the headers at once.
 */
export function sendSigned(
  ctx: Context,
  signer: Signer,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): number {
  // Written on the node response as the envelope endpoints do; headers set on ctx before are kept (writeHead
  // merges them).
  ctx.respond = false;
  return writeSigned(ctx.res, signer, status, value, headers);
}

/**
 * The same on the node response itself (the envelope endpoints, which do not go through Koa): the headers
 * in one `writeHead`, with `extra` ones (Retry-After, Connection) when given.
 */
export function writeSigned(
  res: ServerResponse,
  signer: Signer,
  status: number,
  value: unknown,
  extra?: Record<string, string>,
): number {
  const json = JSON.stringify(value);
  const length = Buffer.byteLength(json);
  const signature = signResponse(signer, { status, body: json });
  const headers: Record<string, string | number> = {
    'Content-Type': JSON_TYPE,
    'Content-Length': length,
    'Content-Digest': signature['content-digest'],
    'Signature-Input': signature['signature-input'],
    Signature: signature.signature,
  };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(json);
  return length;
}

const JSON_TYPE = 'application/json; charset=utf-8';
