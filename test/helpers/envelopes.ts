import { randomBytes } from 'node:crypto';
import { signObject, signRequest, type Envelope, type Mode, type Signer } from '../../src/protocol/index.js';

export type Form = 'headers' | 'envelope' | 'both';

export const PATHS: Record<Mode, string> = {
  sync: '/agent/message',
  async: '/agent/task',
  stream: '/agent/stream',
};

export function envelope(
  from: string,
  to: string,
  mode: Mode,
  payload: object,
  extra: Partial<Envelope> = {},
): Envelope {
  return {
    from,
    to,
    skill: 'chat',
    mode,
    nonce: randomBytes(12).toString('hex'),
    timestamp: new Date().toISOString(),
    traceId: `trace-${randomBytes(4).toString('hex')}`,
    spanId: `span-${randomBytes(4).toString('hex')}`,
    payload: payload as Record<string, unknown>,
    ...extra,
  };
}

export interface Signed {
  body: string;
  headers: Record<string, string>;
}

/** Signs an envelope in the given form; `path` is what Form A covers. */
export function sign(env: Envelope, signer: Signer, form: Form = 'headers', path = PATHS[env.mode]): Signed {
  const value = form === 'headers' ? env : signObject(env, signer);
  const body = JSON.stringify(value);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (form !== 'envelope') Object.assign(headers, signRequest(signer, { method: 'POST', path, body }));
  return { body, headers };
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> & { code?: string; message?: string; status?: string };
}

export async function post(baseUrl: string, path: string, signed: Signed): Promise<Reply> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: signed.headers,
    body: signed.body,
  });
  const text = await response.text();
  let json: Reply['json'] = {};
  try {
    json = JSON.parse(text) as Reply['json'];
  } catch {
    // Streams and plain-text answers are read through `text`.
  }
  return { status: response.status, headers: response.headers, text, json };
}
