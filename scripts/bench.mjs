#!/usr/bin/env node
// `npm run bench`: runs each bench section in turn. Each measures its own baseline in the same
// run and prints its figures with their targets and PASS/FAIL; nothing here asserts a time.
//
// Sections are listed once, below. Pick some with BENCH_ONLY=api,growth (comma-separated names)
// or name filters as arguments (`npm run bench -- api`); BENCH_DATABASE=postgres|pglite limits
// the database benches to one database; BENCH_API_ROWS=mix,list picks rows of the api section. Other settings: BENCH_API_ROUNDS (api section: pairs of rounds per row, default 5),
// BENCH_API_ROUND_MS (api section: one round's length, default 3000), BENCH_API_PAIRS=1 (api section: every pair printed), BENCH_PIN=0|1 (the api
// section pins the server under test to CPU 0 and the generator and PostgreSQL to CPU 1 by default where `taskset` and two CPUs are; 0: never, 1: every section),
// BENCH_MEMORY_MINUTES (memory section, default 10), BENCH_SEPA_PAYOUTS (sepa section, default 10000), BENCH_CPU_PROF=<dir>
// (CPU profiles of the platform processes), BENCH_PLATFORM_FLAGS (Node flags of the platform processes, e.g. --trace-gc)
// and BENCH_CHILD_STDOUT=1 (what they print after their ready line, to stderr). Sections run with --expose-gc: the load
// generator collects its garbage before each run, so that its own pauses do not read as the server's latency.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { percent, stealMeter } from './steal.mjs';

/** Every bench section, in the order a full run takes them. */
const SECTIONS = [
  { name: 'protocol', file: 'packages/protocol/bench/protocol.bench.ts' },
  { name: 'strict-json', file: 'packages/server/bench/strict-json.bench.ts' },
  { name: 'api', file: 'packages/server/bench/api.bench.ts' },
  { name: 'embedded-plans', file: 'packages/server/bench/embedded-plans.bench.ts' },
  { name: 'growth', file: 'packages/server/bench/growth.bench.ts' },
  { name: 'webhooks', file: 'packages/server/bench/webhooks.bench.ts' },
  { name: 'pix', file: 'packages/server/bench/pix.bench.ts' },
  { name: 'sepa', file: 'packages/server/bench/sepa.bench.ts' },
  { name: 'backoffice', file: 'packages/server/bench/backoffice.bench.ts' },
  { name: 'memory', file: 'packages/server/bench/memory.bench.ts' },
];

const root = new URL('..', import.meta.url).pathname;
// A bench file nobody listed above still runs, after the listed ones, under its file name.
const listed = new Set(SECTIONS.map((section) => section.file));
const unlisted = readdirSync(join(root, 'packages'))
  .map((pkg) => join('packages', pkg, 'bench'))
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.bench.ts'))
      .map((f) => join(dir, f)),
  )
  .filter((file) => !listed.has(file))
  .sort()
  .map((file) => ({ name: basename(file, '.bench.ts'), file }));

const only = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);
const filters = process.argv.slice(2);
const all = [...SECTIONS, ...unlisted];
const unknown = only.filter((name) => !all.some((section) => section.name === name));
if (unknown.length > 0) {
  console.error(`BENCH_ONLY: no section ${unknown.join(', ')}; sections: ${all.map((s) => s.name).join(', ')}`);
  process.exit(2);
}
const chosen = all.filter(
  (section) =>
    (only.length === 0 || only.includes(section.name)) &&
    (filters.length === 0 || filters.some((filter) => section.file.includes(filter) || section.name === filter)),
);

let failed = 0;
for (const section of chosen) {
  console.log(`\n## ${section.name} (${section.file})\n`);
  const stolen = stealMeter();
  const run = spawnSync(process.execPath, ['--expose-gc', '--conditions=source', '--import', 'tsx', section.file], {
    cwd: root,
    stdio: 'inherit',
  });
  if (run.status !== 0) failed++;
  // On a shared virtual machine another guest can take much of every core; every section says how
  // much, so that a figure measured then is read as such (the api section also measures such rounds again).
  console.log(
    `\n(${section.name}: hypervisor steal ${percent(stolen())} of the machine's CPU time during this section)`,
  );
}
process.exit(failed === 0 ? 0 : 1);
