/**
 * The embedded database has no autovacuum (a single-user PGlite backend starts no launcher), so
 * the sweeper vacuums the tables that purges and status changes churn; PostgreSQL is left to its
 * own autovacuum.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startSweeper, sweepOnce, vacuumOnce } from '../src/worker/sweeper.js';
import { databases, startTestPlatform, type TestPlatform } from './harness.js';

/** Rows the statistics count as dead, and when the table was last vacuumed by hand and by autovacuum. */
async function tableStats(platform: TestPlatform, table: string) {
  const db = platform.services.db;
  // Counters reach the statistics views when the backend is idle and a flush is due: force one.
  await db.query('SELECT pg_stat_force_next_flush()');
  const result = await db.query<{ dead: bigint; vacuumed: Date | null; autovacuumed: Date | null }>(
    `SELECT n_dead_tup AS dead, last_vacuum AS vacuumed, last_autovacuum AS autovacuumed
       FROM pg_stat_user_tables WHERE relname = $1`,
    [table],
  );
  const row = result.rows[0];
  assert.ok(row, `no statistics for ${table}`);
  return { dead: Number(row.dead), vacuumed: row.vacuumed, autovacuumed: row.autovacuumed };
}

/** `n` nonces whose signatures expired an hour ago: the next sweep purges them. */
async function spentNonces(platform: TestPlatform, n: number): Promise<void> {
  const expired = Math.floor(platform.services.now() / 1000) - 3600;
  await Promise.all(Array.from({ length: n }, () => platform.services.nonces.consume(1n, randomUUID(), expired)));
}

for (const database of databases()) {
  describe(`vacuum (${database})`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({ database });
    });
    after(() => platform.close());

    if (database === 'pglite') {
      it('a purge leaves dead rows that nothing else removes; the vacuum step removes them', async () => {
        await spentNonces(platform, 300);
        assert.equal((await sweepOnce(platform.services)).noncesPurged, 300);
        const purged = await tableStats(platform, 'request_nonces');
        assert.ok(purged.dead >= 300, `dead rows after the purge: ${purged.dead}`);
        // No autovacuum in the embedded database: more sweeps and time change nothing.
        await new Promise((resolve) => setTimeout(resolve, 1200));
        await sweepOnce(platform.services);
        const later = await tableStats(platform, 'request_nonces');
        assert.ok(later.dead >= 300 && later.autovacuumed === null);

        const done = await vacuumOnce(platform.services);
        assert.deepEqual(
          done.filter((vacuumed) => vacuumed.table === 'request_nonces').map(({ table, dead }) => ({ table, dead })),
          [{ table: 'request_nonces', dead: purged.dead }],
        );
        const vacuumed = await tableStats(platform, 'request_nonces');
        assert.equal(vacuumed.dead, 0);
        assert.ok(vacuumed.vacuumed !== null);
        // Nothing left to do: the next pass touches no table.
        assert.deepEqual(
          (await vacuumOnce(platform.services)).filter((vacuumed) => vacuumed.table === 'request_nonces'),
          [],
        );
      });

      it('the running sweeper vacuums on its own once the vacuum interval has passed', async () => {
        const previous = (await tableStats(platform, 'request_nonces')).vacuumed?.getTime() ?? 0;
        await spentNonces(platform, 100);
        const stop = startSweeper(platform.services, platform.app.log, 20, 50);
        try {
          // Purged by a sweep, counted once the statistics flush, then vacuumed by a later sweep.
          const deadline = Date.now() + 10_000;
          let stats = await tableStats(platform, 'request_nonces');
          while ((stats.dead > 0 || (stats.vacuumed?.getTime() ?? 0) <= previous) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            stats = await tableStats(platform, 'request_nonces');
          }
          assert.equal(await platform.services.nonces.count(), 0);
          assert.equal(stats.dead, 0);
        } finally {
          await stop();
        }
      });
    } else {
      it('PostgreSQL is left to its autovacuum', async () => {
        await spentNonces(platform, 10);
        await sweepOnce(platform.services);
        assert.deepEqual(await vacuumOnce(platform.services), []);
      });
    }
  });
}
