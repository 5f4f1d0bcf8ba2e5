import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { SseWriter, type SseOptions } from '../agent/sse.js';
import { hasBody, readRawBody } from '../agent/body.js';
import { ticketFor } from '../agent/intake.js';
import { ProtocolError, schemaInvalid } from '../protocol/index.js';

/** `application/json`, `application/a2a+json` or any other `+json` type (or none: curl's default). */
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * The request body as parsed JSON, read under the agent port's one admission for bodies (agent/body.ts and
 * intake.ts: the shared byte budget, the read slots, at most a few per client address, the minimum rate),
 * so a body trickled in slowly holds neither a tunnel socket nor memory for long (issue 25, item 1). 413 past
 * `limit` (a declared length is refused before a byte is read, a chunked body as soon as it passes it), 400
 * when it is not JSON, ContentTypeNotSupported for another media type, 408 when the caller left or stalled,
 * 503 when the agent is receiving too much. An empty body is `{}` (HTTP+JSON's cancel and subscribe POSTs
 * have none). `onBytes` hears of each chunk as it arrives: what was read, whatever the request declared. The
 * caller's key was checked before: the read slot is given back as soon as the body is in.
 */
export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
  onBytes?: (bytes: number) => void,
): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type && !JSON_TYPE.test(type)) {
    throw new ContentTypeNotSupportedError(
      `Send the body as application/json or application/a2a+json (got "${type.slice(0, 60)}").`,
    );
  }
  // The caller left while the request waited (its key being checked): nothing more will come.
  if (req.destroyed) throw gone();
  let body: Buffer;
  try {
    body = await readRawBody(req, limit, onBytes);
  } catch (error) {
    // The caller left, or the listener's deadline cut it: its doing, not the agent's.
    throw error instanceof ProtocolError ? error : gone();
  } finally {
    ticketFor(req).verified();
  }
  if (body.length === 0) return {};
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    // The parser's message quotes the body, which may hold a secret: say only what to fix.
    throw schemaInvalid('The request body is not valid JSON; send one JSON object.', 'shape');
  }
}

/**
 * The request is answered without reading (the rest of) its body: its connection closes after the reply,
 * so a body trickled in slowly holds nothing (Node would otherwise read on to reuse the connection).
 */
export function closeUnread(req: IncomingMessage, res: ServerResponse): void {
  if (hasBody(req) && !req.complete && !res.headersSent) res.setHeader('Connection', 'close');
}

function gone() {
  return schemaInvalid('The request body did not arrive whole; send it again.', 'size', 408);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  type = 'application/json',
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': `${type}; charset=utf-8`,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

export interface StreamPlan<T> {
  /**
   * The stream's first result, already awaited so an early error is answered as plain JSON; without it
   * the stream opens first and an early error is an error event.
   */
  first?: IteratorResult<T>;
  rest: AsyncIterator<T>;
  /** One event's data, as the transport frames it. */
  encode(event: T): unknown;
  /** The `event: error` data for a failure after the stream opened. */
  errorData(error: unknown): unknown;
  /**
   * The caller left (or was cut off for reading too slowly): told at once, where the iterator's return
   * waits for its next event, which on a slow task may be minutes away.
   */
  onLeave?(): void;
  sse?: SseOptions;
}

/**
 * Sends a stream as Server-Sent Events through the agent's one SSE writer (its headers, keep-alive comments,
 * and bound on unsent data). When the caller leaves, the SDK's iterator is told to return: the task goes
 * on (a caller may resubscribe), only this stream's listener goes once the next event or the end arrives.
 */
export async function streamSse<T>(res: ServerResponse, plan: StreamPlan<T>): Promise<void> {
  const sse = new SseWriter(res, plan.sse);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    plan.onLeave?.();
    void plan.rest.return?.().catch(() => undefined);
  };
  res.once('close', stop);
  try {
    let next = plan.first ?? (await plan.rest.next());
    while (!next.done && !sse.closed) {
      sse.send(plan.encode(next.value));
      next = await plan.rest.next();
    }
  } catch (error) {
    sse.send(plan.errorData(error), 'error');
  } finally {
    res.off('close', stop);
    if (sse.closed) stop();
    sse.end();
  }
}
