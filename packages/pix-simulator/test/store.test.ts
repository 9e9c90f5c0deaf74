import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Store } from '../src/store.js';
import { tempDir } from './helpers.js';

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
