// The embedded database does not fill a new WAL segment with zeroes before its first record
// (db.ts, NEW_WAL_SEGMENTS_UNFILLED): the segment it moves into is a sparse file of 16 MB, and the
// rows written across the switch read back after a restart on the same directory.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../src/db/db.js';

const SEGMENT = 16 * 1024 * 1024;

describe("the embedded database's new WAL segments", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-wal-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it(
    'are not zero-filled: the segment after a switch holds only what was written to it',
    { timeout: 120_000 },
    async () => {
      const db = await openDatabase({ dataDir });
      try {
        const [setting] = (await db.query<{ wal_init_zero: string }>('SHOW wal_init_zero')).rows;
        assert.equal(setting?.wal_init_zero, 'off');
        await db.exec('CREATE TABLE wal_probe (id int PRIMARY KEY, pad text NOT NULL)');
        await db.query(`INSERT INTO wal_probe SELECT i, repeat('x', 200) FROM generate_series(1, 10) AS i`);
        await db.exec('SELECT pg_switch_wal()');
        await db.query(`INSERT INTO wal_probe SELECT i, repeat('y', 200) FROM generate_series(11, 20) AS i`);
        const [current] = (
          await db.query<{ name: string }>('SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS name')
        ).rows;
        const file = join(dataDir, 'pgdata', 'pg_wal', current?.name ?? '');
        const { size, blocks } = statSync(file);
        assert.equal(size, SEGMENT);
        // Zero-filled, all 16 MB are allocated; here a few pages of records and the last byte's.
        assert.ok(blocks * 512 < SEGMENT / 8, `${blocks * 512} bytes allocated of ${size}`);
      } finally {
        await db.close();
      }
      const again = await openDatabase({ dataDir });
      try {
        const [count] = (await again.query<{ n: number }>('SELECT count(*)::int AS n FROM wal_probe')).rows;
        assert.equal(count?.n, 20);
        assert.ok(readdirSync(join(dataDir, 'pgdata', 'pg_wal')).length > 0);
      } finally {
        await again.close();
      }
    },
  );
});
