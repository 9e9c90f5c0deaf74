// The embedded database keeps its calls from WebAssembly into JavaScript on V8's generic wrapper
// (db.ts, keepGenericWasmWrappers): the tier-up of those wrappers is where Node 24.22.3 crashed
// and deadlocked test processes that open and close embedded databases. Each case runs a process
// of its own with V8 tracing its compilations (`--trace-wasm-compilation-times` prints "Compiled
// WasmToJS wrapper" for each tier-up) and the same statements on a fresh embedded database.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '../../..');
/** Enough statements for PGlite's busiest import (the clock, ten calls a statement) to pass V8's 1,000. */
const STATEMENTS = 300;
const TIER_UP = /Compiled WasmToJS wrapper/;

/** Runs `script` (an ES module's text) in a process tracing its WebAssembly compilations; what it printed. */
function traced(script: string): string {
  const run = spawnSync(
    process.execPath,
    ['--trace-wasm-compilation-times', '--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: join(ROOT, 'packages/server'), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 120_000 },
  );
  assert.equal(run.status, 0, run.stderr.slice(-2000));
  return run.stdout + run.stderr;
}

describe("the embedded database and V8's WebAssembly wrappers", () => {
  it('PGlite on its own tiers its imports up on this Node (the trace sees it)', () => {
    const output = traced(`
      import { PGlite } from '@electric-sql/pglite';
      const db = await PGlite.create();
      for (let i = 0; i < ${STATEMENTS}; i++) await db.query('SELECT $1::int AS n', [i]);
      await db.close();
    `);
    assert.match(output, TIER_UP);
  });

  it('openDatabase keeps every import on the generic wrapper: no tier-up, however many statements', () => {
    const output = traced(`
      import { openDatabase } from './src/db/db.ts';
      const db = await openDatabase({ dataDir: 'memory://' });
      for (let i = 0; i < ${STATEMENTS}; i++) await db.query('SELECT $1::int AS n', [i]);
      await db.close();
    `);
    assert.match(output, /Compiled function/, 'the trace is on');
    assert.doesNotMatch(output, TIER_UP);
  });
});
