import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { isLoopbackHost } from '../protocol/index.js';

/**
 * The listener's own deadlines (issue 11, item 3). Headers must arrive within 10 s and a whole request
 * within 20 s; a body is held to the stricter minimum rate of intake.ts (a 256 KiB body at 16 KiB/s after a
 * 2 s grace: 18 s). Node checks them every second (its default, 30 s, let a 20 s deadline run to 50 s).
 * Past `maxConnections`, Node closes each new connection as soon as it is accepted, before reading a byte
 * (the caller sees a reset); connections already open, the tunnel's among them, go on.
 */
export interface ListenerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  checkIntervalMs: number;
  maxConnections: number;
  /** How long a connection from another host may stay open between requests. */
  keepAliveTimeoutMs: number;
}

export const LISTENER_LIMITS: ListenerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  checkIntervalMs: 1000,
  maxConnections: 1024,
  // Longer than the idle timeouts of tunnels and proxies in front of us, so they never race our close.
  keepAliveTimeoutMs: 65_000,
};

// What Node itself would answer a request it could not parse or that took too long, once it had begun.
const REPLIES: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
};

/**
 * The agent port's HTTP server. Node's deadlines count from the moment a connection opens, and Node answers
 * one that has not spoken by then with an unrequested `408 Request Timeout`. The tunnel client (localtunnel's
 * TunnelCluster) opens its local connections as soon as its tunnel sockets connect, and they sit idle until
 * a caller comes: that 408 travelled up the idle tunnel socket and the tunnel server handed it to the next
 * caller routed there (issue 25; DESIGN.md "The tunnel, as it behaves in the world"). So:
 * - a connection that has sent nothing is never written to. From this machine (the tunnel client, a local
 *   proxy) it is left open: it is someone's pool. From another host it is closed silently at the headers
 *   deadline, so strangers cannot park connections;
 * - between requests, a connection from this machine is never closed for idling either: the tunnel server
 *   may be routing a caller to it at that very moment (a close would cost that caller its answer). One from
 *   another host is closed after `keepAliveTimeoutMs`, as before;
 * - a request that has begun keeps Node's deadlines, and Node's answer (408, 400, 431) when it misses them.
 * Connections from this machine are bounded by `maxConnections`, like every other.
 */
export function createAgentListener(handler: RequestListener, limits: ListenerLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    handler,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  server.on('clientError', onClientError);
  // With a listener here, Node leaves an idle socket's fate to us (its default is to destroy it).
  server.on('timeout', (socket: Socket) => {
    if (!isLocal(socket)) socket.destroy();
  });
  return server;
}

function onClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) {
    // Never spoke: no answer. Node stopped watching it; a request it sends later is watched afresh.
    if (!isLocal(socket)) socket.destroy();
    return;
  }
  const reply = REPLIES[error.code ?? ''] ?? '400 Bad Request';
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // Only when nothing of a response went out: bytes after a partial answer would corrupt it for the caller.
  if (socket.writable && !response?.headersSent && error.code !== 'ECONNRESET') {
    socket.end(`HTTP/1.1 ${reply}\r\nConnection: close\r\n\r\n`, () => socket.destroy());
  } else socket.destroy();
}

function isLocal(socket: Socket): boolean {
  return isLoopbackHost((socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
}
