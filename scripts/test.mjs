#!/usr/bin/env node
// Runs every package's tests with node's test runner, TypeScript loaded by tsx and workspace
// packages resolved to their sources (the "source" export condition). TAP streams to stdout; a
// second reporter (test-summary-reporter.mjs) records each result, summarized after the TAP:
// counts per package, failures by file and name, then one last line `N passed, N failed, N skipped`.
// Usage: node scripts/test.mjs [--dry-run] [--e2e] [path-filter ...]  (npm test -- [path-filter ...])
// Without arguments: every suite but the end-to-end ones (E2E below), and the whole type check.
// --e2e (npm run test:e2e): the end-to-end suites only. With filters, the test files whose path
// contains one run, end-to-end or not, and only their packages are type-checked (each one's build,
// with the packages it references, and its check configs). --dry-run prints the type checks and
// the files, and runs nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runWatched } from './file-deadline.mjs';

const root = new URL('..', import.meta.url).pathname;
const dryRun = process.argv.includes('--dry-run');
const e2e = process.argv.includes('--e2e');
const filters = process.argv.slice(2).filter((arg) => arg !== '--dry-run' && arg !== '--e2e');

/**
 * The end-to-end suites, `npm run test:e2e`: whole processes driven as their users drive them (the
 * command lines, restarts and signals, the simulators, the walkthroughs run from the docs, the
 * backup drill) and the portal and `/docs` in Chromium. Each starts processes (TypeScript loaded
 * afresh by each) or a browser, so they take most of the time of all the suites together;
 * `npm test` leaves them to their own script, which `.ci/run` runs right after it. A path ending
 * in `/` names a folder.
 */
const E2E = [
  'packages/merchant/test/cli-errors.test.ts',
  'packages/merchant/test/cli-trigger.test.ts',
  'packages/merchant/test/cli.test.ts',
  'packages/portal/test/',
  'packages/server/test/backup-restore.test.ts',
  'packages/server/test/channels-e2e.test.ts',
  'packages/server/test/cli-errors.test.ts',
  'packages/server/test/data-dir-lock.test.ts',
  'packages/server/test/docs.test.ts',
  'packages/server/test/master-key.test.ts',
  'packages/server/test/operator.test.ts',
  'packages/server/test/restart-replay.test.ts',
  'packages/server/test/sepa-bank-e2e.test.ts',
  'packages/server/test/sepa-bank-files-e2e.test.ts',
  'packages/server/test/signal-at-start.test.ts',
  'packages/server/test/suite-gates.test.ts',
  'packages/server/test/walkthroughs.test.ts',
];
const isE2e = (file) => E2E.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));

function findTests(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const files = ['packages', 'examples', 'tools']
  .flatMap((dir) => {
    try {
      return findTests(join(root, dir));
    } catch {
      return [];
    }
  })
  .map((file) => relative(root, file))
  .filter((file) => (filters.length === 0 ? isE2e(file) === e2e : filters.some((filter) => file.includes(filter))))
  .filter((file) => !e2e || isE2e(file))
  .sort();

function checkConfigs() {
  return ['packages', 'examples', 'tools'].flatMap((dir) => {
    let entries;
    try {
      entries = readdirSync(join(root, dir));
    } catch {
      return [];
    }
    return entries.flatMap((pkg) =>
      ['tsconfig.check.json', 'tsconfig.test.json']
        .map((name) => join(dir, pkg, name))
        .filter((config) => {
          try {
            return statSync(join(root, config)).isFile();
          } catch {
            return false;
          }
        }),
    );
  });
}

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// The build graph first, then what it does not cover: each package's tests, benchmarks and
// (portal) web app, through its tsconfig.check.json / tsconfig.test.json. A filtered run checks
// the packages of the files it runs: their builds (tsc -b follows their references) and their
// check configs.
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const packageDir = (file) => file.split('/').slice(0, 2).join('/');
const testedPackages = [...new Set(files.map(packageDir))];
const checks =
  filters.length === 0 && !e2e
    ? [['-b'], ...checkConfigs().map((config) => ['-p', config])]
    : [
        [
          '-b',
          ...testedPackages.map((dir) => join(dir, 'tsconfig.json')).filter((config) => existsSync(join(root, config))),
        ],
        ...checkConfigs()
          .filter((config) => testedPackages.includes(packageDir(config)))
          .map((config) => ['-p', config]),
      ].filter((args) => args.length > 1);
if (dryRun) {
  for (const args of checks) console.log(`tsc ${args.join(' ')}`);
  for (const file of files) console.log(file);
  process.exit(0);
}
for (const args of checks) {
  const typecheck = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
  if (typecheck.status !== 0) {
    console.error(`type check failed: tsc ${args.join(' ')}`);
    process.exit(typecheck.status ?? 1);
  }
}

const resultsDir = mkdtempSync(join(tmpdir(), 'paygate-test-'));
const resultsFile = join(resultsDir, 'results.jsonl');
const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${join(root, 'scripts/test-summary-reporter.mjs')}`,
  `--test-reporter-destination=${resultsFile}`,
];
// Under the file deadline (scripts/file-deadline.mjs): a test file whose process hangs for good is
// killed and reported failed instead of holding the run.
const status = await runWatched(
  process.execPath,
  ['--conditions=source', '--import', 'tsx', '--test', '--test-concurrency=2', ...reporters, ...files],
  { cwd: root, env: { ...process.env, NODE_OPTIONS: '' } },
);
summarize();
rmSync(resultsDir, { recursive: true, force: true });
process.exit(status);

/** Prints the summary of the recorded results after the TAP stream (lines after the TAP are comments). */
function summarize() {
  if (!existsSync(resultsFile)) {
    console.log('# no test results were recorded');
    return;
  }
  const results = readFileSync(resultsFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
  const packageOf = (file) => relative(root, file).split('/').slice(0, 2).join('/');
  const counts = new Map();
  for (const { file, status } of results) {
    const count = counts.get(packageOf(file)) ?? { tests: 0, pass: 0, fail: 0, skipped: 0 };
    count.tests += 1;
    count[status] += 1;
    counts.set(packageOf(file), count);
  }
  const rows = [['package', 'tests', 'pass', 'fail', 'skipped']];
  for (const [name, count] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    rows.push([name, count.tests, count.pass, count.fail, count.skipped].map(String));
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  console.log('\n# summary by package');
  for (const row of rows) {
    console.log(
      `#   ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')}`,
    );
  }
  const failures = results.filter(({ status }) => status === 'fail');
  if (failures.length > 0) {
    console.log(`# failed (${failures.length}):`);
    for (const { file, name, failureType, error, stderr } of failures) {
      const kind = failureType && failureType !== 'testCodeFailure' ? ` [${failureType}]` : '';
      console.log(`#   ${relative(root, file)}: ${name}${kind}${error ? ` — ${error}` : ''}`);
      for (const line of stderr ?? []) console.log(`#     stderr: ${line}`);
    }
  }
  const total = (status) => results.filter((r) => r.status === status).length;
  console.log(`${total('pass')} passed, ${total('fail')} failed, ${total('skipped')} skipped`);
}
