import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DataDirLockedError, lockDataDir } from '../src/lock.js';
import { Store } from '../src/store.js';
import { tempDir } from './helpers.js';

describe('lockDataDir', () => {
  test('one holder at a time: the second is refused with the owner pid; a release frees it', () => {
    const temp = tempDir();
    try {
      const first = lockDataDir(temp.dir);
      assert.equal(readFileSync(first.path, 'utf8'), `${process.pid}\n`);
      assert.throws(
        () => lockDataDir(temp.dir),
        (error: unknown) =>
          error instanceof DataDirLockedError &&
          error.ownerPid === process.pid &&
          error.message ===
            `the data directory ${temp.dir} is in use by pid ${process.pid} (one simulator per directory)`,
      );
      assert.equal(readFileSync(first.path, 'utf8'), `${process.pid}\n`, 'the refused attempt left the pid alone');
      first.release();
      lockDataDir(temp.dir).release();
    } finally {
      temp.remove();
    }
  });
});

describe('Store', () => {
  test('a torn last journal line (death while writing) is dropped; everything before it is kept', () => {
    const temp = tempDir();
    try {
      const store = new Store(temp.dir);
      store.commit([{ t: 'mode', v: 'drop' }]);
      store.commit([{ t: 'token-epoch', v: 3 }]);
      // Simulate a kill -9: no close (no compaction), then a half-written line.
      appendFileSync(join(temp.dir, 'journal.jsonl'), '[{"t":"mode","v":"dupl');
      const again = new Store(temp.dir);
      assert.equal(again.mode, 'drop');
      assert.equal(again.tokenEpoch, 3);
      again.close();
      store.close();
    } finally {
      temp.remove();
    }
  });
});
