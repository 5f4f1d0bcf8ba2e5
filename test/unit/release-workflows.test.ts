import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { invalidWorkflows } from '../../scripts/check-workflows.js';
import { tempDir } from '../helpers/agents.js';

// The GitHub Actions workflows cannot run here: they are checked by the validator `npm run lint` runs, and
// their shape (what runs where, in which order) is read from the files themselves.
const ROOT = join(import.meta.dirname, '../..');
const WORKFLOWS = join(ROOT, '.github/workflows');
const dirs: string[] = [];

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
}
interface Job {
  needs?: string | string[];
  'runs-on': string;
  container?: string;
  permissions?: Record<string, string>;
  strategy?: { matrix: { include: Record<string, string>[] } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, Job>;
}

const workflow = (name: string) => yaml.load(readFileSync(join(WORKFLOWS, name), 'utf8')) as Workflow;
const stepIndex = (job: Job, match: (step: Step) => boolean) => job.steps.findIndex(match);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('workflow validation in npm run lint', () => {
  it('runs the validator over every workflow, and both workflows pass it', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.scripts.lint).toContain('tsx scripts/check-workflows.ts');
    expect(pkg.devDependencies['@action-validator/cli']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(invalidWorkflows(WORKFLOWS)).toEqual([]);
  });

  it('fails on a broken copy, naming the file and what is wrong', () => {
    const dir = tempDir('agent-bridge-workflows-');
    dirs.push(dir);
    cpSync(WORKFLOWS, dir, { recursive: true });
    const release = join(dir, 'release.yml');
    // A typo GitHub would only report when a tag is pushed: the job has no runner.
    writeFileSync(
      release,
      readFileSync(release, 'utf8').replace('runs-on: ${{ matrix.runner }}', 'runs_on: ${{ matrix.runner }}'),
    );
    const failed = invalidWorkflows(dir);
    expect(failed.map((f) => f.file)).toEqual([release]);
    expect(failed[0]!.report).toMatch(/runs_on/);

    // As `npm run lint` runs it: a non-zero exit that names the file.
    let exit: { status: number | null; stderr: string } = { status: 0, stderr: '' };
    try {
      execFileSync('npx', ['tsx', 'scripts/check-workflows.ts', dir], { cwd: ROOT, stdio: 'pipe' });
    } catch (error) {
      const { status, stderr } = error as { status: number | null; stderr: Buffer };
      exit = { status, stderr: stderr.toString() };
    }
    expect(exit.status).toBe(1);
    expect(exit.stderr).toContain(`${release} is not a valid workflow`);
  });
});

describe('the CI workflow', () => {
  it('runs .ci/run (lint and every test) on every push, in Debian as root so apt can install what it needs', () => {
    const ci = workflow('ci.yml');
    expect(Object.keys(ci.on)).toContain('push');
    const [job] = Object.values(ci.jobs);
    expect(job!.container).toMatch(/^node:20-bookworm/);
    expect(job!.steps.some((step) => step.run === 'bash .ci/run')).toBe(true);
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/apt-get install[^\n]*"\$\{missing\[@\]\}"/);
  });
});

describe('the release workflow', () => {
  const release = workflow('release.yml');
  const { version, build, publish } = release.jobs;

  it('starts on a version tag and first checks that the tag names package.json version', () => {
    expect(release.on).toEqual({ push: { tags: ['v[0-9]+.[0-9]+.[0-9]+*'] } });
    expect(version!.steps.at(-1)?.run).toBe('npx tsx scripts/release/check-tag.ts "$GITHUB_REF_NAME"');
    expect(build!.needs).toBe('version');
    expect(release.permissions).toEqual({ contents: 'read' });
  });

  it('builds each platform on its own runner: Linux AppImage and deb, macOS dmg for arm64 and x64, Windows NSIS', () => {
    const matrix = build!.strategy!.matrix.include;
    expect(matrix.map((entry) => [entry.name, entry.runner, entry.targets])).toEqual([
      ['linux-x64', 'ubuntu-24.04', '--linux AppImage deb --x64'],
      // macos-15 is Apple silicon; macos-15-intel the last Intel image (until August 2027).
      ['mac-arm64', 'macos-15', '--mac dmg zip --arm64'],
      ['mac-x64', 'macos-15-intel', '--mac dmg zip --x64'],
      ['win-x64', 'windows-2022', '--win nsis --x64'],
    ]);
  });

  it('signs, packages, smoke-tests the packaged app, and only then keeps the installers', () => {
    const signing = stepIndex(build!, (s) => s.run?.includes('scripts/release/signing.ts') === true);
    const packaging = stepIndex(build!, (s) => s.run?.includes('electron-builder') === true);
    const smoke = stepIndex(build!, (s) => s.run?.includes('test/e2e/packaged-app.e2e.test.ts') === true);
    const upload = stepIndex(build!, (s) => s.uses?.startsWith('actions/upload-artifact') === true);
    expect([signing, packaging, smoke, upload].every((index) => index >= 0)).toBe(true);
    expect(signing).toBeLessThan(packaging);
    expect(packaging).toBeLessThan(smoke);
    expect(smoke).toBeLessThan(upload);
    expect(build!.steps[smoke]!.env).toEqual({ AGENT_BRIDGE_PACKAGED_APP: '${{ matrix.app }}' });
    // An unset secret arrives as an empty variable, which electron-builder would take for a certificate.
    expect(build!.steps[packaging]!.run).toContain('if [ -z "${!name}" ]; then unset "$name"; fi');
    // Nothing is published from a build: the publish job does it once every platform passed.
    expect(build!.steps[packaging]!.run).toContain('--publish never');
    // The repository is the workflow's own, never a name written here.
    expect(build!.steps[packaging]!.run).toContain('-c.publish.owner=${{ github.repository_owner }}');
    expect(build!.steps[packaging]!.run).toContain('-c.publish.repo=${{ github.event.repository.name }}');
  });

  it('hands the signing secrets to the two signing steps only, each platform its own', () => {
    const signing = [
      stepIndex(build!, (s) => s.run?.includes('signing.ts') === true),
      stepIndex(build!, (s) => s.run?.includes('electron-builder') === true),
    ];
    const guarded = /^\$\{\{ matrix\.platform == '(mac|win)' && secrets\.(\w+) \|\| '' \}\}$/;
    for (const [index, step] of build!.steps.entries()) {
      const secrets = Object.values(step.env ?? {}).filter((value) => value.includes('secrets.'));
      expect(secrets.length > 0, step.name ?? step.run ?? step.uses).toBe(signing.includes(index));
      for (const value of secrets) {
        const [, platform, secret] = guarded.exec(value) ?? [];
        expect(secret, value).toMatch(platform === 'win' ? /^WIN_/ : /^(MAC|APPLE)_/);
      }
    }
  });

  it('publishes after every build, installers first and the update metadata of each platform last', () => {
    expect(publish!.needs).toEqual(['version', 'build']);
    expect(publish!.permissions).toEqual({ contents: 'write' });
    const script = publish!.steps.map((step) => step.run ?? '').join('\n');
    expect(script).toContain('scripts/release/merge-mac-metadata.ts upload/latest-mac.yml');
    const installers = script.indexOf("! -name 'latest*.yml' -print0 | xargs -0 gh release upload");
    const metadata = script.indexOf(
      'gh release upload "$TAG" --clobber upload/latest.yml upload/latest-mac.yml upload/latest-linux.yml',
    );
    expect(installers).toBeGreaterThan(0);
    expect(metadata).toBeGreaterThan(installers);
    expect(script.indexOf('gh release edit "$TAG" --draft=false')).toBeGreaterThan(metadata);
  });
});
