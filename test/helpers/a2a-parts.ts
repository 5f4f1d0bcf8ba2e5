import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Role, type Part, type SendMessageRequest } from '@a2a-js/sdk';

/** A text part (v1.0 shapes, as the SDK's client takes them). */
export function textPart(text: string): Part {
  return {
    content: { $case: 'text', value: text },
    mediaType: 'text/plain',
    filename: '',
    metadata: undefined,
  };
}

/** A file part with its bytes inline (`raw`: base64 on the wire). */
export function filePart(bytes: Buffer | string, mediaType: string, filename = ''): Part {
  const value = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return { content: { $case: 'raw', value }, mediaType, filename, metadata: undefined };
}

/** A file part that names a URL. */
export function urlPart(url: string, mediaType: string, filename = ''): Part {
  return { content: { $case: 'url', value: url }, mediaType, filename, metadata: undefined };
}

/** A data part: structured JSON. */
export function dataPart(value: unknown): Part {
  return {
    content: { $case: 'data', value },
    mediaType: 'application/json',
    filename: '',
    metadata: undefined,
  };
}

/** A SendMessageRequest with these parts, blocking. */
export function sendParts(parts: Part[], contextId = ''): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId,
      taskId: '',
      role: Role.ROLE_USER,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

/** A 1x1 PNG: a real image by its signature and structure. */
export const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A PNG's signature and header, padded with zeros to `size` bytes: an image by its bytes, as big as needed. */
export function pngOfSize(size: number): Buffer {
  const image = Buffer.alloc(size);
  PNG.copy(image, 0, 0, Math.min(PNG.length, size));
  return image;
}

export interface FileServer {
  /** `http://127.0.0.1:<port><path>`: reachable only where loopback is allowed (--dev-http-peers). */
  url(path: string): string;
  /** Paths asked for, in order. */
  requested: string[];
  close(): Promise<void>;
}

/**
 * A loopback web server with fixed answers per path: `{ body, type }`, or `{ status, location }` for a
 * redirect; anything else is 404.
 */
export async function startFileServer(
  files: Record<string, { body?: Buffer; type?: string; status?: number; location?: string }>,
): Promise<FileServer> {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requested.push(path);
    const file = files[path];
    if (!file) return void res.writeHead(404).end('not found');
    if (file.location) return void res.writeHead(file.status ?? 302, { location: file.location }).end();
    res.writeHead(file.status ?? 200, { 'content-type': file.type ?? 'application/octet-stream' });
    res.end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requested,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
