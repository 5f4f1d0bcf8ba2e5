// `npm run lint`: every GitHub Actions workflow checked against the workflow schema by action-validator,
// so a broken workflow fails here rather than on a release tag.
// Usage: tsx scripts/check-workflows.ts [DIR] (default .github/workflows)
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** The validator's command line, run by this Node (it needs no download: its checker is bundled). */
function validatorCli(): string {
  const manifest = require.resolve('@action-validator/cli/package.json');
  const { bin } = require(manifest) as { bin: Record<string, string> };
  return join(dirname(manifest), bin['action-validator']!);
}

/** The workflow files of `dir` whose check failed, each with the validator's report. */
export function invalidWorkflows(dir: string): { file: string; report: string }[] {
  const files = readdirSync(dir).filter((name) => /\.ya?ml$/.test(name));
  if (files.length === 0) throw new Error(`No workflow files in ${dir}.`);
  const cli = validatorCli();
  const failed: { file: string; report: string }[] = [];
  for (const name of files.sort()) {
    try {
      execFileSync(process.execPath, [cli, join(dir, name)], {
        stdio: 'pipe',
        env: { ...process.env, FORCE_COLOR: '0' },
      });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: Buffer; stdout?: Buffer };
      failed.push({ file: join(dir, name), report: `${stderr ?? ''}${stdout ?? ''}`.trim() });
    }
  }
  return failed;
}

function main(): void {
  const dir = process.argv[2] ?? '.github/workflows';
  const failed = invalidWorkflows(dir);
  for (const { file, report } of failed) console.error(`${file} is not a valid workflow:\n${report}\n`);
  if (failed.length > 0) process.exit(1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
