import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the release build knew when it packaged the app: whether it was code-signed, and where its releases
 * are. Written by scripts/release/signing.ts; absent in a build from source, which then counts as unsigned.
 */
export interface BuildInfo {
  signed: boolean;
  /** The releases page of the repository that built it (https://github.com/OWNER/REPO/releases). */
  releasesUrl?: string;
}

/** Where the file sits, relative to the app's folder (`app.getAppPath()`). */
export const BUILD_INFO_FILE = 'dist/electron/build-info.json';

export function readBuildInfo(appPath: string): BuildInfo {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(appPath, BUILD_INFO_FILE), 'utf8'));
  } catch {
    return { signed: false };
  }
  const info = (parsed ?? {}) as Record<string, unknown>;
  const releasesUrl =
    typeof info.releasesUrl === 'string' && isHttps(info.releasesUrl) ? info.releasesUrl : undefined;
  return { signed: info.signed === true, ...(releasesUrl ? { releasesUrl } : {}) };
}

function isHttps(url: string): boolean {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}
