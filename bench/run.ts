// `npm run bench [-- --quick] [--profile DIR] [--json FILE] [--strict] [--unpinned]`: runs every
// measurement and prints the table. --profile writes a V8 CPU profile of the agent process (summarise it
// with `npx tsx bench/profile-summary.ts FILE`); --strict exits 1 when a target is missed; --unpinned
// leaves process placement to the scheduler (see pinning.ts).
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildServerChild } from './build-child.js';
import { useBuiltChild } from './child-host.js';
import { formatReport, missedTargets } from './report.js';
import { FULL, QUICK, runSuite } from './suite.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'string' },
    json: { type: 'string' },
    strict: { type: 'boolean', default: false },
    unpinned: { type: 'boolean', default: false },
  },
});

const config = { ...(values.quick ? QUICK : FULL), cpuProfileDir: values.profile, pin: !values.unpinned };
useBuiltChild(await buildServerChild());
const started = performance.now();
const results = await runSuite(config, (step) => process.stderr.write(`  ${step}...\n`));
process.stderr.write(`  done in ${((performance.now() - started) / 1000).toFixed(0)} s\n\n`);
console.log(formatReport(results));
if (values.profile) {
  // One file per thread: thread 0 is the agent's main thread.
  const main = readdirSync(values.profile).filter((f) => f.includes(`.${results.agentPid}.0.`));
  for (const file of main) {
    console.log(`\nCPU profile of the agent's main thread: ${join(values.profile, file)}`);
    console.log(`summarise it with: npx tsx bench/profile-summary.ts ${join(values.profile, file)}`);
  }
}
if (values.json) writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
if (values.strict && missedTargets(results) > 0) process.exitCode = 1;
