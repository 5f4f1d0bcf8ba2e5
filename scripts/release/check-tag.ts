// Release step first of all: the tag that started the release must name package.json's version, so the
// installers, the update metadata and the app's own version all agree (the updater compares versions).
// Usage (in .github/workflows/release.yml): tsx scripts/release/check-tag.ts "$GITHUB_REF_NAME"
import { appendFileSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// Semantic versioning (semver.org), as electron-updater compares versions: 1.2.3 or 1.2.3-beta.1.
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export type TagCheck = { ok: true; version: string; prerelease: boolean } | { ok: false; problem: string };

export function checkTag(tag: string, packageVersion: string): TagCheck {
  if (!SEMVER.test(packageVersion))
    return {
      ok: false,
      problem: `package.json's version "${packageVersion}" is not a semantic version like 1.2.3.`,
    };
  if (!tag.startsWith('v') || !SEMVER.test(tag.slice(1)))
    return {
      ok: false,
      problem: `The tag "${tag}" is not a version tag: tag the release v${packageVersion}.`,
    };
  const version = tag.slice(1);
  if (version !== packageVersion) {
    return {
      ok: false,
      problem: `The tag ${tag} does not match package.json's version ${packageVersion}: set "version": "${version}" in package.json (npm version ${version} does both), or tag v${packageVersion}.`,
    };
  }
  return { ok: true, version, prerelease: version.includes('-') };
}

function main(): void {
  const tag = process.argv[2] ?? '';
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version?: unknown };
  const result = checkTag(tag, String(pkg.version ?? ''));
  if (!result.ok) {
    console.log(`::error::${result.problem}`);
    process.exit(1);
  }
  console.log(`Releasing Agent Bridge ${result.version}${result.prerelease ? ' (a pre-release)' : ''}.`);
  if (process.env.GITHUB_OUTPUT)
    appendFileSync(process.env.GITHUB_OUTPUT, `version=${result.version}\nprerelease=${result.prerelease}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
