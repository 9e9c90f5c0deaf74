#!/usr/bin/env node
// Runs every `packages/*/bench/*.bench.ts` in turn. Each benchmark measures its own baseline in
// the same run and prints ratios against it; nothing here asserts a time.
// Usage: node scripts/bench.mjs [name-filter ...]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const benches = readdirSync(join(root, 'packages'))
  .map((pkg) => join('packages', pkg, 'bench'))
  .filter((dir) => existsSync(join(root, dir)))
  .flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.bench.ts'))
      .map((f) => join(dir, f)),
  )
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();

let failed = 0;
for (const file of benches) {
  console.log(`\n## ${file}\n`);
  const run = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], {
    cwd: root,
    stdio: 'inherit',
  });
  if (run.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
