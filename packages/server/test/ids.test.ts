import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openDatabase } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { newEventId, ulid, EVENT_ID } from '../src/ids.js';

test('ULIDs: 26 Crockford characters, ordered by their millisecond, distinct within one', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  // More ids than one refill of the entropy pool holds (4 KiB, 16 bytes an id).
  const ids = Array.from({ length: 2_000 }, () => ulid(now));
  for (const id of ids) assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(new Set(ids.map((id) => id.slice(0, 10))).size, 1);
  assert.ok(ulid(now - 1) < ulid(now) && ulid(now) < ulid(now + 1));
  assert.match(newEventId(now), EVENT_ID);
});

test('ULIDs: the random part uses all 32 characters in every position', () => {
  const seen = Array.from({ length: 16 }, () => new Set<string>());
  for (let i = 0; i < 3_000; i++) {
    const tail = ulid(0).slice(10);
    for (let p = 0; p < 16; p++) seen[p]?.add(tail[p] as string);
  }
  for (const position of seen) assert.equal(position.size, 32);
});

test('order numbers: two fresh databases do not issue the same numbers', async () => {
  // Order numbers are channel references: a reinstalled platform sharing a channel account with
  // its earlier database must not reissue that database's numbers (migration 0020).
  const firsts: bigint[] = [];
  for (let i = 0; i < 2; i++) {
    const db = await openDatabase({ dataDir: 'memory://' });
    try {
      await migrate(db);
      const { rows } = await db.query<{ n: bigint }>("SELECT nextval('order_no_seq') AS n");
      firsts.push((rows[0] as { n: bigint }).n);
    } finally {
      await db.close();
    }
  }
  assert.notEqual(firsts[0], firsts[1]);
  for (const n of firsts) assert.ok(n >= 1n && n <= 1_000_000_001n, `${n} leaves room in ten digits`);
});
