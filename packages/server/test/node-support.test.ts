import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { nodeEndOfLifeWarning } from '../src/node-support.js';

const ROOT = join(import.meta.dirname, '../../..');

/**
 * A real Node 20 binary (the line most machines have by default that Paygate does not support):
 * /usr/bin/node when it is one, else scripts/node-line.sh 20 installs one into its cache.
 */
function node20(): string {
  const system = '/usr/bin/node';
  if (
    existsSync(system) &&
    execFileSync(system, ['-p', 'process.versions.node'], { encoding: 'utf8' }).startsWith('20.')
  ) {
    return system;
  }
  return join(execFileSync(join(ROOT, 'scripts/node-line.sh'), ['20'], { encoding: 'utf8' }).trim(), 'node');
}

/** `npm start`'s first step (npm's prestart) under `node`, in an empty directory: what it printed. */
function prestart(node: string): { status: number | null; stdout: string; stderr: string } {
  const cwd = mkdtempSync(join(tmpdir(), 'paygate-prestart-'));
  const run = spawnSync(node, [join(ROOT, 'scripts/prestart.mjs')], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('npm start on a Node.js line Paygate does not support (the real Node 20)', () => {
  const node = node20();

  it('says first, in one line, which Node it needs and how to get it, and goes on', () => {
    const run = prestart(node);
    assert.equal(run.status, 0);
    assert.equal(run.stdout, '');
    const lines = run.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0] ?? '', /^paygate: Paygate needs Node\.js 22 \(22\.12 or newer\), 24 or 26 and this is v20\./);
    assert.match(lines[0] ?? '', /export PATH="\$\(scripts\/node-line\.sh 24\):\$PATH"/);
  });

  it('says nothing on this supported Node', () => {
    const run = prestart(process.execPath);
    assert.equal(run.status, 0);
    assert.equal(run.stderr, '');
  });

  it('opens the embedded database without handing V8 a flag it does not know', () => {
    const run = spawnSync(
      node,
      [
        '--conditions=source',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { openDatabase } from './src/db/db.ts';
         const db = await openDatabase({ dataDir: 'memory://' });
         console.log(JSON.stringify(await db.query('SELECT 1::int AS n')));
         await db.close();`,
      ],
      { cwd: join(ROOT, 'packages/server'), encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(run.status, 0, run.stderr.slice(-2000));
    assert.match(run.stdout, /"n":1/);
    assert.doesNotMatch(run.stderr, /unrecognized flag/);
    assert.equal(run.stderr, '');
  });
});

const day = (iso: string) => new Date(`${iso}T12:00:00Z`);

describe('node end-of-life warning', () => {
  it('is silent on the supported lines 22, 24 and 26', () => {
    for (const version of ['v22.12.0', 'v24.11.1', 'v26.0.0']) {
      assert.equal(nodeEndOfLifeWarning(version, day('2026-11-25')), undefined, version);
    }
  });

  it('names the version, its end of life and the supported lines on Node 20 after 2026-04-30', () => {
    const warning = nodeEndOfLifeWarning('v20.19.1', day('2026-05-01'));
    assert.equal(
      warning,
      'Node.js v20.19.1 is past its end of life since 2026-04-30 and gets no security fixes; run Paygate on Node.js 22, 24 or 26',
    );
  });

  it('is silent on a line until its end-of-life day, inclusive', () => {
    assert.equal(nodeEndOfLifeWarning('v20.11.0', day('2026-04-30')), undefined);
    assert.match(nodeEndOfLifeWarning('v22.1.0', day('2027-05-01')) ?? '', /since 2027-04-30/);
  });

  it('warns on odd lines past their six months and on lines older than the table', () => {
    assert.match(nodeEndOfLifeWarning('v25.2.0', day('2026-11-25')) ?? '', /past its end of life since 2026-06-01/);
    assert.match(
      nodeEndOfLifeWarning('v16.20.2', day('2026-11-25')) ?? '',
      /^Node\.js v16\.20\.2 is past its end of life and/,
    );
  });

  it('assumes a line newer than the table is supported, and ignores what is not a version', () => {
    assert.equal(nodeEndOfLifeWarning('v28.0.0', day('2035-01-01')), undefined);
    assert.equal(nodeEndOfLifeWarning('bun', day('2026-11-25')), undefined);
  });
});
