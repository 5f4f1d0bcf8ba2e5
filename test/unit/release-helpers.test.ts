import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { readBuildInfo } from '../../electron/build-info.js';
import { checkTag } from '../../scripts/release/check-tag.js';
import { mergeMetadata, parseMetadata } from '../../scripts/release/merge-mac-metadata.js';
import { releasesUrl, signingPlan } from '../../scripts/release/signing.js';
import { tempDir } from '../helpers/agents.js';

// The release workflow's own steps (scripts/release/), run here as the workflow runs them.
const ROOT = join(import.meta.dirname, '../..');
const dirs: string[] = [];
const dir = () => {
  const made = tempDir('agent-bridge-release-');
  dirs.push(made);
  return made;
};
afterAll(() => {
  for (const made of dirs) rmSync(made, { recursive: true, force: true });
});

describe('check-tag: the tag must name package.json version', () => {
  it('accepts v<version>, and says whether it is a pre-release', () => {
    expect(checkTag('v0.2.0', '0.2.0')).toEqual({ ok: true, version: '0.2.0', prerelease: false });
    expect(checkTag('v1.0.0-beta.1', '1.0.0-beta.1')).toEqual({
      ok: true,
      version: '1.0.0-beta.1',
      prerelease: true,
    });
  });

  it('refuses a tag for another version, saying both ways to fix it', () => {
    const result = checkTag('v0.3.0', '0.2.0');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toBe(
      `The tag v0.3.0 does not match package.json's version 0.2.0: set "version": "0.3.0" in package.json (npm version 0.3.0 does both), or tag v0.2.0.`,
    );
  });

  it.each(['0.2.0', 'v0.2', 'v0.2.0.1', 'v01.2.3', 'release-0.2.0', 'v0.2.0+build'])(
    'refuses %s as no version tag',
    (tag) => {
      const result = checkTag(tag, '0.2.0');
      expect(result.ok).toBe(false);
      if (!result.ok)
        expect(result.problem).toMatch(/not a version tag: tag the release v0\.2\.0|does not match/);
    },
  );

  it('fails the step with an error annotation, and passes the version on when it matches', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
    const output = join(dir(), 'output');
    writeFileSync(output, '');
    const run = (tag: string) =>
      execFileSync('npx', ['tsx', 'scripts/release/check-tag.ts', tag], {
        cwd: ROOT,
        env: { ...process.env, GITHUB_OUTPUT: output },
        stdio: 'pipe',
      }).toString();
    expect(run(`v${version}`)).toContain(`Releasing Agent Bridge ${version}.`);
    expect(readFileSync(output, 'utf8')).toBe(`version=${version}\nprerelease=false\n`);
    let failure = '';
    try {
      run('v99.0.0');
    } catch (error) {
      failure = (error as { stdout: Buffer }).stdout.toString();
    }
    expect(failure).toMatch(/^::error::The tag v99\.0\.0 does not match package\.json's version/);
  });
});

describe('signing: what a build with the secrets it has does and says', () => {
  const macCert = { CSC_LINK: 'base64-p12' };
  const notary = {
    APPLE_API_KEY_P8: '-----BEGIN PRIVATE KEY-----',
    APPLE_API_KEY_ID: 'K',
    APPLE_API_ISSUER: 'I',
  };

  it('signs and notarises a Mac build that has every secret', () => {
    const plan = signingPlan('mac', { ...macCert, ...notary });
    expect(plan).toMatchObject({ signed: true, notarised: true, exports: {} });
    expect(plan.appleApiKey).toBe(notary.APPLE_API_KEY_P8);
    expect(plan.notices.every((notice) => notice.level === 'notice')).toBe(true);
  });

  it('says a Mac build without its certificate is unsigned, and keeps electron-builder off the keychain', () => {
    const plan = signingPlan('mac', { ...notary, CSC_LINK: '  ' });
    expect(plan).toMatchObject({ signed: false, notarised: false });
    expect(plan.exports).toEqual({
      CSC_IDENTITY_AUTO_DISCOVERY: 'false',
      SIGNING_BUILDER_ARGS: '-c.mac.identity=- -c.mac.hardenedRuntime=false',
    });
    expect(plan.notices).toEqual([
      {
        level: 'warning',
        text: expect.stringMatching(
          /^This macOS build is unsigned and not notarised: the MAC_CSC_LINK secret is not set/,
        ),
      },
    ]);
  });

  it('names what is missing for notarisation', () => {
    const plan = signingPlan('mac', { ...macCert, APPLE_API_KEY_ID: 'K' });
    expect(plan).toMatchObject({ signed: true, notarised: false });
    expect(plan.notices.at(-1)?.text).toMatch(
      /signed but not notarised: APPLE_API_KEY_P8, APPLE_API_ISSUER are not set/,
    );
  });

  it('signs Windows with its own certificate only, and says when it has none', () => {
    expect(signingPlan('win', { WIN_CSC_LINK: 'base64-pfx' })).toMatchObject({ signed: true });
    const unsigned = signingPlan('win', { CSC_LINK: 'a Mac certificate' });
    expect(unsigned.signed).toBe(false);
    expect(unsigned.notices[0]).toMatchObject({
      level: 'warning',
      text: expect.stringMatching(/^This Windows build is unsigned/),
    });
  });

  it('says every Linux build is unsigned, whatever the secrets', () => {
    const plan = signingPlan('linux', { ...macCert, WIN_CSC_LINK: 'x' });
    expect(plan.signed).toBe(false);
    expect(plan.notices[0]?.text).toMatch(/^This Linux build is unsigned/);
  });

  it('finds the releases page from the workflow context only', () => {
    expect(
      releasesUrl({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'someone/agent-bridge' }),
    ).toBe('https://github.com/someone/agent-bridge/releases');
    expect(releasesUrl({})).toBeUndefined();
    expect(
      releasesUrl({ GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'a/b/../c' }),
    ).toBeUndefined();
  });

  it('writes build-info.json, which the app reads back; an unsigned or missing one means no self-update', () => {
    const work = dir();
    const env = { ...process.env, GITHUB_ENV: join(work, 'env'), RUNNER_TEMP: work };
    const script = join(ROOT, 'scripts/release/signing.ts');
    const run = (platform: string, extra: Record<string, string>) =>
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [script, platform], {
        cwd: work,
        env: {
          ...env,
          GITHUB_SERVER_URL: 'https://github.com',
          GITHUB_REPOSITORY: 'someone/agent-bridge',
          ...extra,
        },
        stdio: 'pipe',
      }).toString();
    expect(readBuildInfo(work)).toEqual({ signed: false });

    const log = run('mac', { ...macCert, ...notary });
    expect(log).toContain('::notice::Signing the macOS app');
    expect(readBuildInfo(work)).toEqual({
      signed: true,
      releasesUrl: 'https://github.com/someone/agent-bridge/releases',
    });
    // The key's text goes to a private file; only its path goes to the next steps.
    const keyFile = join(work, 'apple-api-key.p8');
    expect(readFileSync(keyFile, 'utf8')).toBe(notary.APPLE_API_KEY_P8);
    expect(readFileSync(join(work, 'env'), 'utf8')).toBe(`APPLE_API_KEY=${keyFile}\n`);
    expect(log).not.toContain(notary.APPLE_API_KEY_P8);

    expect(run('win', {})).toContain('::warning::This Windows build is unsigned');
    expect(readBuildInfo(work)).toMatchObject({ signed: false });
  });

  it('reads a build-info.json that is broken or says anything else as unsigned', () => {
    const work = dir();
    mkdirSync(join(work, 'dist/electron'), { recursive: true });
    const file = join(work, 'dist/electron/build-info.json');
    for (const [content, expected] of [
      ['{not json', { signed: false }],
      ['{"signed": "yes"}', { signed: false }],
      ['{"signed": true, "releasesUrl": "http://example.com/releases"}', { signed: true }],
      [
        '{"signed": true, "releasesUrl": "https://example.com/r"}',
        { signed: true, releasesUrl: 'https://example.com/r' },
      ],
    ] as const) {
      writeFileSync(file, content);
      expect(readBuildInfo(work), content).toEqual(expected);
    }
    expect(existsSync(file)).toBe(true);
  });
});

describe('merge-mac-metadata: one latest-mac.yml for the arm64 and x64 builds', () => {
  const arm = {
    version: '0.2.0',
    files: [
      { url: 'agent-bridge-0.2.0-mac-arm64.zip', sha512: 'A', size: 10 },
      { url: 'agent-bridge-0.2.0-mac-arm64.dmg', sha512: 'B', size: 11 },
    ],
    path: 'agent-bridge-0.2.0-mac-arm64.zip',
    sha512: 'A',
    releaseDate: '2026-11-26T10:00:00.000Z',
  };
  const x64 = {
    version: '0.2.0',
    files: [
      { url: 'agent-bridge-0.2.0-mac-x64.zip', sha512: 'C', size: 12 },
      { url: 'agent-bridge-0.2.0-mac-x64.dmg', sha512: 'D', size: 13 },
    ],
    path: 'agent-bridge-0.2.0-mac-x64.zip',
    sha512: 'C',
    releaseDate: '2026-11-26T10:05:00.000Z',
  };

  it('lists the files of both, keeps the first top-level path, and the later date', () => {
    expect(mergeMetadata([arm, x64])).toEqual({
      ...arm,
      files: [...arm.files, ...x64.files],
      releaseDate: '2026-11-26T10:05:00.000Z',
    });
  });

  it('refuses builds of two versions, or one file name with two contents', () => {
    expect(() => mergeMetadata([arm, { ...x64, version: '0.2.1' }])).toThrow(
      'The builds disagree on the version (0.2.0 and 0.2.1): rebuild from one tag.',
    );
    expect(() => mergeMetadata([arm, { ...x64, files: [{ ...arm.files[0]!, sha512: 'Z' }] }])).toThrow(
      /agent-bridge-0\.2\.0-mac-arm64\.zip with different contents/,
    );
  });

  it('refuses a file that is not update metadata', () => {
    expect(() => parseMetadata('version: 0.2.0\n', 'latest-mac.yml')).toThrow(
      'latest-mac.yml is not update metadata: it needs a version and a list of files.',
    );
    expect(() => parseMetadata('version: 0.2.0\nfiles:\n  - url: a.zip\n', 'x.yml')).toThrow(
      'x.yml lists a file without its url and sha512.',
    );
  });

  it('writes the merged file as the workflow runs it', () => {
    const work = dir();
    writeFileSync(join(work, 'arm.yml'), yaml.dump(arm));
    writeFileSync(join(work, 'x64.yml'), yaml.dump(x64));
    execFileSync(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'scripts/release/merge-mac-metadata.ts'), 'out.yml', 'arm.yml', 'x64.yml'],
      { cwd: work, stdio: 'pipe' },
    );
    const merged = parseMetadata(readFileSync(join(work, 'out.yml'), 'utf8'), 'out.yml');
    expect(merged.files.map((file) => file.url)).toEqual(
      [...arm.files, ...x64.files].map((file) => file.url),
    );
  });
});
