import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { DirectoryInUseError, LOCK_FILE, lockDirectory } from '../src/index.js';

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-dir-lock-'));
  dirs.push(dir);
  return dir;
}
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A separate process that takes the lock, says so on stdout, and then waits to be killed. */
async function holdInChild(dir: string) {
  const script = `
    const { lockDirectory } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)});
    lockDirectory(${JSON.stringify(dir)}, 'test holder');
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  assert.equal(chunk.toString().trim(), 'held');
  return child;
}

describe('lockDirectory', () => {
  it('refuses a second owner in the same process, and allows one after release', () => {
    const dir = freshDir();
    const first = lockDirectory(dir, 'first');
    assert.throws(
      () => lockDirectory(dir, 'second'),
      (error: unknown) =>
        error instanceof DirectoryInUseError && error.owner?.pid === process.pid && error.owner.role === 'first',
    );
    first.release();
    first.release(); // idempotent
    lockDirectory(dir, 'second').release();
  });

  it('names the directory and the owner pid of another process in one line', async () => {
    const dir = freshDir();
    const child = await holdInChild(dir);
    try {
      const error = (() => {
        try {
          lockDirectory(dir, 'me');
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      assert.ok(error instanceof DirectoryInUseError);
      assert.equal(error.owner?.pid, child.pid);
      assert.match(error.message, new RegExp(`${dir}.*test holder \\(pid ${child.pid}\\)`));
      assert.doesNotMatch(error.message, /\n/);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('is free again the moment its owner is SIGKILLed', async () => {
    const dir = freshDir();
    const child = await holdInChild(dir);
    child.kill('SIGKILL');
    await once(child, 'exit');
    const lock = lockDirectory(dir, 'next');
    assert.deepEqual(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')), { pid: process.pid, role: 'next' });
    lock.release();
  });

  it('creates a missing directory', () => {
    const dir = join(freshDir(), 'a', 'b');
    lockDirectory(dir, 'creator').release();
  });
});
