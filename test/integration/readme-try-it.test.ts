// The README's first steps, run as written (issue 26: its SAMVAD example used a `signer` it never defined):
// "Try it in two minutes" (the demo, then `agent-bridge call`) and the client example of docs/calling.md,
// against a demo started as the README starts it. Only what a test must change is changed: the port (8787
// may be taken here) and the data folder; `npx agent-bridge` runs the same CLI from source.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agents.js';
import { freePort, startChildAgent, type ChildAgent } from '../helpers/child-agent.js';
import { until } from '../helpers/polling.js';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const CALLING = readFileSync(join(ROOT, 'docs/calling.md'), 'utf8');
const base = tempDir('agent-bridge-readme-');
const env = { AGENT_BRIDGE_DATA_DIR: base, HOME: base };
let demo: ChildAgent;
let port: number;

/** The fenced blocks of one section of a page (the README unless named). */
function blocks(section: string, language: string, page = README): string[] {
  const start = page.indexOf(`\n## ${section}\n`);
  expect(start, `the page has a "${section}" section`).toBeGreaterThan(0);
  const end = page.indexOf('\n## ', start + 1);
  const text = page.slice(start, end === -1 ? undefined : end);
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
}

function run(
  command: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}

beforeAll(async () => {
  const [install, serve] = blocks('Try it in two minutes', 'sh')[0]!.trim().split('\n');
  expect(install).toBe('npm ci');
  expect(serve).toBe('npm run serve -- --demo');
  port = await freePort();
  demo = await startChildAgent(['--demo', '--port', String(port), '--console-port', '0'], env);
  await until(() => demo.output().includes('  Access:'), 15_000, 'the start banner');
}, 30_000);

afterAll(() => {
  if (demo?.process.exitCode === null) demo.process.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

describe("the README's first steps", () => {
  it('"Try it in two minutes": the call it shows gets the demo\'s reply, signed and verified', async () => {
    const command = blocks('Try it in two minutes', 'sh')[1]!.trim();
    expect(command).toBe('npx agent-bridge call --demo agent://127.0.0.1:8787 "Hello"');
    // The banner prints the same command, for the port it has.
    expect(demo.output()).toContain(`npx agent-bridge call --demo agent://127.0.0.1:${port} "Hello"`);
    const args = ['call', '--demo', `agent://127.0.0.1:${port}`, 'Hello'];
    const result = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\[demo\] No model is behind this reply/);
    expect(result.stderr).toMatch(/\nReply verified: signed by agent:\/\/127\.0\.0\.1:\d+ with its key k-/);
  });

  it('the client example of docs/calling.md runs as shown: its signer is defined, its reply verified', async () => {
    const [example] = blocks('From code', 'ts', CALLING);
    expect(example).toContain('const client = new AgentClient({ id: demo, signer, devHttp: true });');
    const dir = mkdtempSync(join(tmpdir(), 'readme-example-'));
    try {
      const file = join(dir, 'hello.ts');
      // Saved "in this folder": its imports are the repository's, and ES modules as its package.json says.
      writeFileSync(join(dir, 'package.json'), '{"type": "module"}');
      writeFileSync(file, example!.replaceAll("'./src/", `'${ROOT}/src/`).replaceAll(':8787', `:${port}`));
      const result = await run(process.execPath, ['--import', 'tsx', file]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      // The reply's status, that it verified, its body; then the stream's events, the signed result among them.
      expect(result.stdout).toMatch(/^200 true \{/);
      expect(result.stdout).toMatch(/reply: ["'`]\[demo\] No model is behind this reply/);
      expect(result.stdout).toMatch(/\nresult \{/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
