// Builds bench/server-child.ts (and the core it imports) into plain JavaScript, as `npm run serve` runs
// the core, so that the agent is measured without the TypeScript loader in its CPU time and memory.
import { build } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHILD_OUT_DIR = fileURLToPath(new URL('../dist/bench/', import.meta.url));

/**
 * Builds the server child of this tree, or of another checkout `tree` (bench:compare builds an earlier
 * commit's, which imports that tree's core) into `outdir`; returns the child's entry.
 */
export async function buildServerChild(tree?: string, outdir = CHILD_OUT_DIR): Promise<string> {
  await build({
    entryPoints: [
      tree
        ? join(tree, 'bench/server-child.ts')
        : fileURLToPath(new URL('./server-child.ts', import.meta.url)),
    ],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    // As `build:core` builds it: a map beside each file, for a stack trace read with --enable-source-maps
    // (not used by default: it holds every loaded map in memory).
    sourcesContent: false,
    logLevel: 'warning',
  });
  return join(outdir, 'server-child.js');
}
