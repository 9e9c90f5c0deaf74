/**
 * The embedded database has no autovacuum (a single-user PGlite backend starts no launcher), so
 * the sweeper vacuums the tables that purges and status changes churn; PostgreSQL is left to its
 * own autovacuum.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Nonces } from '../src/modules/auth/service.js';
import { startSweeper, sweepOnce, vacuumOnce } from '../src/worker/sweeper.js';
import { countingDb, createMerchant, databases, startTestPlatform, type TestPlatform } from './harness.js';

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

/**
 * Dead rows in the portal and channel tables: sign-in attempts a day old and recent ones, sessions
 * expired, revoked, idle and live, channel nonces and notifications written then purged or
 * updated as the platform does. Returns the ids of the rows a purge must keep.
 */
async function churnPortalAndChannels(platform: TestPlatform): Promise<{ attempt: bigint; session: bigint }> {
  const db = platform.services.db;
  const now = platform.services.now();
  const at = (msAgo: number) => new Date(now - msAgo);
  const merchant = await createMerchant(platform);
  const merchantId = (await platform.services.merchants.findByAccessKey(merchant.accessKey))?.id as bigint;
  const user = await db.query<{ id: bigint }>(
    `INSERT INTO portal_users (merchant_id, environment, email, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $4) RETURNING id`,
    [merchantId, platform.config.environment, `${randomUUID()}@shop.example`, at(0)],
  );
  const userId = user.rows[0]?.id as bigint;
  const session = (created: number, seen: number, expires: number, revoked: boolean) =>
    db.query<{ id: bigint }>(
      `INSERT INTO portal_sessions (token_hash, user_id, merchant_id, created_at, last_seen_at, expires_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [randomBytes(32), userId, merchantId, at(created), at(seen), at(-expires), revoked ? at(0) : null],
    );
  const hour = 3_600_000;
  const live = await session(hour, 60_000, 11 * hour, false);
  await session(13 * hour, 12 * hour, -hour, false); // expired
  await session(hour, 60_000, 11 * hour, true); // signed out
  await session(3 * hour, 3 * hour, 9 * hour, false); // idle past SESSION_IDLE_MS
  // Touched as it is used, as every portal request within a minute does.
  await db.query('UPDATE portal_sessions SET last_seen_at = $2 WHERE id = $1', [live.rows[0]?.id, at(0)]);
  const attempt = (msAgo: number) =>
    db.query<{ id: bigint }>(
      `INSERT INTO login_attempts (email, ip, succeeded, created_at) VALUES ($1, '192.0.2.7', false, $2) RETURNING id`,
      [`${randomUUID()}@shop.example`, at(msAgo)],
    );
  for (let i = 0; i < 5; i++) await attempt(25 * hour);
  const recent = await attempt(60_000);
  await db.query(
    `INSERT INTO channel_nonces (channel, nonce, expires_at) SELECT 'psp', 'n' || g, $1 FROM generate_series(1, 20) g`,
    [at(hour)],
  );
  await db.query('DELETE FROM channel_nonces WHERE expires_at < $1', [at(0)]);
  const notification = await db.query<{ id: bigint }>(
    `INSERT INTO channel_notifications (channel, event_id, received_at, headers, body)
     VALUES ('psp', $1, $2, '{}', '\\x7b7d') RETURNING id`,
    [randomUUID(), at(0)],
  );
  await db.query(`UPDATE channel_notifications SET outcome = 'applied', applied_at = $2 WHERE id = $1`, [
    notification.rows[0]?.id,
    at(0),
  ]);
  return { attempt: recent.rows[0]?.id as bigint, session: live.rows[0]?.id as bigint };
}

for (const database of databases()) {
  describe(`nonce purge (${database})`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({ database });
    });
    after(() => platform.close());

    it('takes a backlog in statements of a bounded size and leaves the nonces still in their window', async () => {
      const db = platform.services.db;
      const statements: string[] = [];
      const counted = countingDb(db, statements);
      await spentNonces(platform, 250);
      const live = Math.floor(platform.services.now() / 1000) + 300;
      for (let i = 0; i < 5; i++) assert.ok(await platform.services.nonces.consume(1n, randomUUID(), live));
      const nonces = new Nonces(counted, platform.services.now, 100);
      assert.equal(await nonces.purge(), 250);
      assert.equal(statements.length, 3, 'batches of 100, 100 and 50');
      assert.equal(await nonces.purge(), 0);
      assert.equal(await platform.services.nonces.count(), 5);
    });
  });

  describe(`portal retention (${database})`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({ database });
    });
    after(() => platform.close());

    it('a sweep purges sign-in attempts older than a day and sessions that can no longer be used', async () => {
      const kept = await churnPortalAndChannels(platform);
      await sweepOnce(platform.services);
      const db = platform.services.db;
      const attempts = await db.query<{ id: bigint }>('SELECT id FROM login_attempts');
      assert.deepEqual(
        attempts.rows.map((row) => row.id),
        [kept.attempt],
      );
      const sessions = await db.query<{ id: bigint }>('SELECT id FROM portal_sessions');
      assert.deepEqual(
        sessions.rows.map((row) => row.id),
        [kept.session],
      );
    });
  });

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

      it('the portal and channel tables that purges and updates churn are vacuumed too', async () => {
        await churnPortalAndChannels(platform);
        await sweepOnce(platform.services);
        const done = (await vacuumOnce(platform.services)).map((vacuumed) => vacuumed.table);
        for (const table of ['portal_sessions', 'login_attempts', 'channel_nonces', 'channel_notifications']) {
          assert.ok(done.includes(table), `${table} vacuumed (${done.join(', ')})`);
          assert.equal((await tableStats(platform, table)).dead, 0, table);
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
