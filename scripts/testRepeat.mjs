// `npm run test:repeat -- <file> <n> [vitest options]`: runs one test file n times, one run after another, and
// prints how many runs failed, with the failing tests of each. A flaky test shows up as a failure rate between 0
// and 1; run it under load (`stress-ng --cpu 1 &`) to see what a busy CI machine sees.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [file, countText, ...rest] = process.argv.slice(2);
const count = Number(countText);
if (!file || !Number.isInteger(count) || count < 1) {
  console.error('usage: npm run test:repeat -- <test file> <number of runs> [vitest options]');
  process.exit(2);
}

const scratch = mkdtempSync(join(tmpdir(), 'switchboard-repeat-'));
const failures = new Map();
let failedRuns = 0;
const durations = [];
for (let run = 1; run <= count; run += 1) {
  const report = join(scratch, `run-${run}.json`);
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', file, '--reporter=dot', '--reporter=json', `--outputFile.json=${report}`, ...rest],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    },
  );
  durations.push(Date.now() - started);
  let failed;
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    failed = json.testResults.flatMap((module) =>
      module.assertionResults.filter((test) => test.status === 'failed').map((test) => test.fullName),
    );
    if (json.numFailedTests === 0 && (json.numFailedTestSuites > 0 || result.status !== 0))
      failed = ['(the file itself: a hook, an import or an unhandled error)'];
  } catch {
    failed = [`(no report: exit ${result.status}) ${result.stderr.split('\n').slice(-5).join(' ')}`];
  }
  if (failed.length > 0 || result.status !== 0) {
    failedRuns += 1;
    for (const name of failed) failures.set(name, (failures.get(name) ?? 0) + 1);
  }
  console.log(
    `run ${run}/${count}: ${failed.length === 0 && result.status === 0 ? 'passed' : `FAILED (${failed.join('; ')})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}
rmSync(scratch, { recursive: true, force: true });
const sorted = [...durations].sort((a, b) => a - b);
console.log(
  `\n${file}: ${failedRuns} of ${count} runs failed (failure rate ${(failedRuns / count).toFixed(3)}); median run ${(sorted[Math.floor(count / 2)] / 1000).toFixed(1)} s`,
);
for (const [name, times] of failures) console.log(`  ${times}x ${name}`);
process.exit(failedRuns > 0 ? 1 : 0);
