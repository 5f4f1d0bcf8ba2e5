import { connect, type Socket } from 'node:net';

// Raw HTTP/1.1 over node:net, for what fetch cannot do: declare a body, send part of it, then stall or
// trickle (slow-body / slowloris clients), and see exactly when and how the server answers.

export interface RawReply {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** ms from opening the socket to the whole reply. */
  afterMs: number;
}

export interface RawRequestOptions {
  port: number;
  /** The Host header (e.g. `<id>.localhost:PORT` through the tunnel server); default 127.0.0.1:port. */
  host?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Content-Length to declare; without it the body is sent chunked. */
  declared?: number;
  /** Body bytes sent right after the head (as one chunk when chunked). */
  initial?: number;
  /** Then one byte every `trickleMs` (a slow-body client); without it the request stalls. */
  trickleMs?: number;
}

export interface RawRequest {
  readonly socket: Socket;
  /** The reply, or undefined when the socket closed without a whole one. */
  readonly reply: Promise<RawReply | undefined>;
  /** Resolves when the socket has closed (either side). */
  readonly closed: Promise<void>;
  /** Sends more body bytes (a chunk when chunked). */
  send(bytes: number): void;
  destroy(): void;
}

/** Opens a socket and sends a request head and part of its body; the rest is up to the caller. */
export function rawRequest(options: RawRequestOptions): RawRequest {
  const opened = Date.now();
  const socket = connect({ port: options.port, host: '127.0.0.1' });
  socket.setNoDelay(true);
  const chunked = options.declared === undefined;
  const head = [
    `${options.method ?? 'POST'} ${options.path} HTTP/1.1`,
    `Host: ${options.host ?? `127.0.0.1:${options.port}`}`,
    'Content-Type: application/json',
    chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${options.declared}`,
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  const send = (bytes: number) => {
    if (bytes <= 0 || socket.destroyed || !socket.writable) return;
    const data = Buffer.alloc(bytes, 0x78); // "x"
    socket.write(
      chunked ? Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data,
    );
  };
  socket.on('error', () => undefined); // a reset after the server's answer is expected
  socket.write(head);
  send(options.initial ?? 0);
  const trickle = options.trickleMs ? setInterval(() => send(1), options.trickleMs) : undefined;

  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => clearInterval(trickle));
  const reply = new Promise<RawReply | undefined>((resolve) => {
    let data = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const parsed = parseReply(data);
      if (!parsed) return;
      socket.off('data', onData);
      clearInterval(trickle);
      resolve({ ...parsed, afterMs: Date.now() - opened });
    };
    socket.on('data', onData);
    void closed.then(() => resolve(undefined));
  });
  return { socket, reply, closed, send, destroy: () => socket.destroy() };
}

/** A whole reply with a Content-Length body (every reply of the agent), else undefined. */
function parseReply(data: Buffer): Omit<RawReply, 'afterMs'> | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (data.length < end + 4 + length) return undefined;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: data.subarray(end + 4, end + 4 + length).toString('utf8'),
  };
}

/** The JSON code of an agent's error reply. */
export function codeOf(reply: RawReply | undefined): string | undefined {
  if (!reply) return undefined;
  try {
    return (JSON.parse(reply.body) as { code?: string }).code;
  } catch {
    return undefined;
  }
}
