// Release step before publishing: the arm64 and x64 Macs are built on their own runners, and each build
// writes a latest-mac.yml that lists only its own files. A Mac's updater reads one latest-mac.yml and picks
// its architecture's zip from `files`, so the release carries one file listing both.
// Usage: tsx scripts/release/merge-mac-metadata.ts OUT.yml IN-arm64.yml IN-x64.yml
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import yaml from 'js-yaml';

interface UpdateFile {
  url: string;
  sha512: string;
  size?: number;
  [field: string]: unknown;
}

export interface UpdateMetadata {
  version: string;
  files: UpdateFile[];
  path?: string;
  sha512?: string;
  releaseDate?: string;
  [field: string]: unknown;
}

export function parseMetadata(text: string, source: string): UpdateMetadata {
  const data = yaml.load(text) as Partial<UpdateMetadata> | null;
  if (!data || typeof data.version !== 'string' || !Array.isArray(data.files) || data.files.length === 0)
    throw new Error(`${source} is not update metadata: it needs a version and a list of files.`);
  for (const file of data.files) {
    if (typeof file?.url !== 'string' || typeof file.sha512 !== 'string')
      throw new Error(`${source} lists a file without its url and sha512.`);
  }
  return data as UpdateMetadata;
}

/** One metadata for all of `parts` (same version); the first part's top-level path stays for old updaters. */
export function mergeMetadata(parts: UpdateMetadata[]): UpdateMetadata {
  const [first, ...rest] = parts;
  if (!first) throw new Error('Nothing to merge: give at least one latest-mac.yml.');
  const files = new Map<string, UpdateFile>();
  for (const part of parts) {
    if (part.version !== first.version)
      throw new Error(
        `The builds disagree on the version (${first.version} and ${part.version}): rebuild from one tag.`,
      );
    for (const file of part.files) {
      const seen = files.get(file.url);
      if (seen && seen.sha512 !== file.sha512)
        throw new Error(
          `Two builds made ${file.url} with different contents: each architecture needs its own file name.`,
        );
      files.set(file.url, file);
    }
  }
  const dates = [first, ...rest].map((part) => part.releaseDate).filter((date): date is string => !!date);
  return {
    ...first,
    files: [...files.values()],
    ...(dates.length > 0 ? { releaseDate: dates.sort().at(-1) } : {}),
  };
}

function main(): void {
  const [out, ...inputs] = process.argv.slice(2);
  if (!out || inputs.length === 0) {
    console.error('Usage: tsx scripts/release/merge-mac-metadata.ts OUT.yml IN.yml [IN.yml ...]');
    process.exit(2);
  }
  const merged = mergeMetadata(inputs.map((file) => parseMetadata(readFileSync(file, 'utf8'), file)));
  writeFileSync(out, yaml.dump(merged, { lineWidth: -1 }));
  console.log(`${out}: ${merged.version}, ${merged.files.map((file) => file.url).join(', ')}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
