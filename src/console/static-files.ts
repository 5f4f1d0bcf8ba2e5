import { createReadStream, existsSync, realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { ConsoleError } from './errors.js';

/**
 * Where `npm run build` puts the UI: `dist/renderer` at the repository root, seen from this file in
 * `src/console/` or from the compiled core in `dist/core/`.
 */
export const DEFAULT_STATIC_DIR =
  ['../../dist/renderer/', '../renderer/']
    .map((relative) => fileURLToPath(new URL(relative, import.meta.url)))
    .find((dir) => existsSync(`${dir}index.html`)) ??
  fileURLToPath(new URL('../../dist/renderer/', import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent Bridge console</title></head>
<body><h1>The console UI is not built yet</h1>
<p>Run <code>npm run build</code> in the Agent Bridge folder, then reload this page.
The API at <code>/api</code> works meanwhile.</p></body></html>
`;

/**
 * Serves the built UI from `dir`. Paths are resolved inside `dir` (symbolic links too), so `..` and
 * encoded variants cannot reach other files (directory traversal). A path with no file extension that is
 * not a file answers index.html, so the UI's own routes survive a reload.
 */
export function staticFiles(dir: string) {
  const root = resolve(dir);
  return async (ctx: Context): Promise<void> => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ConsoleError(405, `Use GET for ${ctx.path}.`, undefined, undefined, { Allow: 'GET, HEAD' });
    }
    const file = (await fileFor(root, ctx.path)) ?? (extname(ctx.path) ? undefined : await indexOf(root));
    if (file === undefined) {
      if (ctx.path === '/' || ctx.path === '/index.html') return sendNotBuilt(ctx);
      throw new ConsoleError(404, `No file ${ctx.path.slice(0, 200)} in the console UI.`);
    }
    ctx.type = CONTENT_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream';
    ctx.length = file.size;
    // Vite names assets by content hash: they never change; index.html must be checked every time.
    ctx.set(
      'Cache-Control',
      ctx.path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    ctx.body = ctx.method === 'HEAD' ? null : createReadStream(file.path);
  };
}

async function fileFor(root: string, urlPath: string): Promise<{ path: string; size: number } | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    throw new ConsoleError(400, 'The path is not valid URL encoding.');
  }
  // No NUL bytes, backslashes or hidden files (.env, .git): none belongs to a built UI.
  if (/[\0\\]/.test(decoded) || decoded.split('/').some((part) => part.startsWith('.'))) return undefined;
  const wanted = resolve(root, `.${decoded === '/' ? '/index.html' : decoded}`);
  if (!within(root, wanted)) return undefined;
  try {
    const real = realpathSync(wanted);
    if (!within(realpathSync(root), real)) return undefined;
    const info = await stat(real);
    return info.isFile() ? { path: real, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}

function indexOf(root: string) {
  return fileFor(root, '/index.html');
}

function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function sendNotBuilt(ctx: Context): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = NOT_BUILT;
}
