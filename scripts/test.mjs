#!/usr/bin/env node
// Runs every package's tests with node's test runner, TypeScript loaded by tsx and workspace
// packages resolved to their sources (the "source" export condition).
// Usage: node scripts/test.mjs [path-filter ...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

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

const files = ['packages', 'examples']
  .flatMap((dir) => {
    try {
      return findTests(join(root, dir));
    } catch {
      return [];
    }
  })
  .map((file) => relative(root, file))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();

function checkConfigs() {
  return ['packages', 'examples'].flatMap((dir) => {
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
// (portal) web app, through its tsconfig.check.json / tsconfig.test.json.
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const checks = [['-b'], ...checkConfigs().map((config) => ['-p', config])];
for (const args of checks) {
  const typecheck = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
  if (typecheck.status !== 0) {
    console.error(`type check failed: tsc ${args.join(' ')}`);
    process.exit(typecheck.status ?? 1);
  }
}

const result = spawnSync(
  process.execPath,
  ['--conditions=source', '--import', 'tsx', '--test', '--test-concurrency=2', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: '' } },
);
process.exit(result.status ?? 1);
