// Sums Vitest JSON reports. `collect-results.mjs LABEL OUT` gathers every workspace's
// .vitest-report.json into OUT; `--total A B ...` adds those up and prints "N passed, N failed",
// after the name and first error line of every failed test, so the end of a CI log says what broke.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function reports(dir, found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === '.git') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) reports(path, found);
    else if (entry.name === '.vitest-report.json') found.push(path);
  }
  return found;
}

const args = process.argv.slice(2);
if (args[0] === '--total') {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of args.slice(1)) {
    const r = JSON.parse(readFileSync(file, 'utf8'));
    passed += r.passed;
    failed += r.failed;
    skipped += r.skipped;
    for (const f of r.failures ?? []) console.log(`FAILED on ${r.label}: ${f}`);
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

const [label, out] = args;
const totals = { label, passed: 0, failed: 0, skipped: 0, suites: [], failures: [] };
for (const file of reports('.')) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const failedSuites = r.numFailedTestSuites ?? 0;
  totals.passed += r.numPassedTests;
  // A test file that fails to load counts as a failure even though it ran no test.
  totals.failed += r.numFailedTests + (r.numFailedTests === 0 ? failedSuites : 0);
  totals.skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  totals.suites.push({ file, passed: r.numPassedTests, failed: r.numFailedTests });
  for (const suite of r.testResults ?? []) {
    const firstLine = (text) =>
      String(text ?? '')
        .split('\n')
        .find((l) => l.trim()) ?? '';
    const tests = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of tests) {
      totals.failures.push(`${suite.name} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    }
    if (tests.length === 0 && suite.status === 'failed') {
      totals.failures.push(`${suite.name}: ${firstLine(suite.message)}`);
    }
  }
}
writeFileSync(out, JSON.stringify(totals, null, 2));
console.log(`${label}: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
// Each workspace's wall time (run start to last file's end) and its slowest files, so a CI log
// says where the test time goes.
const seconds = (ms) => `${Math.round(ms / 1000)} s`;
for (const file of reports('.')) {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const files = (r.testResults ?? []).filter((f) => f.endTime && f.startTime);
  if (files.length === 0) continue;
  const end = Math.max(...files.map((f) => f.endTime));
  const slowest = [...files]
    .sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))
    .slice(0, 3)
    .map((f) => `${f.name.split('/').slice(-2).join('/')} ${seconds(f.endTime - f.startTime)}`);
  console.log(
    `  ${file.replace(/\/?\.vitest-report\.json$/, '')}: ${seconds(end - r.startTime)}, ${files.length} files; slowest: ${slowest.join(', ')}`,
  );
}
process.exit(totals.failed > 0 ? 1 : 0);
