import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { tmpdir } from 'node:os';
import { openDatabase, prepared } from '../src/db/db.js';
import { CollectingQuery, keptColumns, typeParser } from '../src/db/pg-rows.js';

// CollectingQuery against pg's own Query on a real PostgreSQL: the same rows, row counts and
// errors, for the same statements, with the same type parsers.
const skip = process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set';
// A statement left waiting for its Sync hangs rather than fails: each test is bounded.
const timeout = 20_000;
let client: pg.Client;
const table = `pg_rows_${process.pid}`;

before(async () => {
  if (skip) return;
  client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, types: { getTypeParser: typeParser } });
  await client.connect();
  await client.query(`CREATE TEMPORARY TABLE ${table} (id int8 PRIMARY KEY, name text, at timestamptz)`);
});
after(async () => {
  await client?.end();
});

function collected(config: pg.QueryConfig): Promise<{ rows: unknown[]; rowCount: number | null }> {
  const rows: unknown[] = [];
  return new Promise((resolve, reject) => {
    client.query(
      new CollectingQuery(config, rows, (error, result) =>
        error ? reject(error) : resolve({ rows, rowCount: result.rowCount }),
      ),
    );
  });
}

async function both(config: pg.QueryConfig) {
  const theirs = await client.query(config);
  const ours = await collected(config);
  return { theirs: { rows: theirs.rows, rowCount: theirs.rowCount }, ours };
}

const EVERY_TYPE = `SELECT 'São Paulo — 東京 — Київ — 🙂'::text AS text, 9007199254740993::int8 AS big, 42::int4 AS small,
       '2026-12-02 18:34:35.123456+05:30'::timestamptz AS at, '{"a": [1, "x", null]}'::jsonb AS doc,
       '\\x00ff10'::bytea AS bytes, 12345.678900::numeric AS amount, true AS yes, ARRAY['a', NULL, 'c']::text[] AS list,
       NULL::text AS nothing, $1::text AS param, g AS n
  FROM generate_series(1, $2::int) AS g`;

test('CollectingQuery: the rows and counts pg gives, every type the platform reads', { skip, timeout }, async () => {
  for (const count of [0, 1, 3, 250]) {
    for (const config of [
      { text: EVERY_TYPE, values: ['p', count] },
      { name: 'pg_rows_every_type', text: EVERY_TYPE, values: ['q', count] },
    ]) {
      const { theirs, ours } = await both(config);
      assert.deepStrictEqual(ours, theirs);
      assert.equal(ours.rows.length, count);
    }
  }
  const [row] = (await collected({ text: EVERY_TYPE, values: ['p', 1] })).rows as Record<string, unknown>[];
  assert.equal(row?.big, 9007199254740993n);
  assert.equal((row?.at as Date).getTime(), Date.UTC(2026, 11, 2, 13, 4, 35, 123));
});

test('CollectingQuery: writes and their counts, with and without RETURNING', { skip, timeout }, async () => {
  const writes: [number, pg.QueryConfig][] = [
    [1, { text: `INSERT INTO ${table} (id, name, at) SELECT g, 'n' || g, now() FROM generate_series(1, 5) AS g` }],
    [
      2,
      { text: `INSERT INTO ${table} (id, name) SELECT g, 'n' || g FROM generate_series(6, 8) AS g RETURNING id, name` },
    ],
    [3, { text: `UPDATE ${table} SET name = name || '!' WHERE id <= $1 RETURNING *`, values: [4] }],
    [4, { text: `DELETE FROM ${table} WHERE id > $1`, values: [6] }],
  ];
  for (const [n, config] of writes) {
    // pg's answer in a transaction rolled back, then ours for good.
    await client.query('BEGIN');
    const theirs = await client.query(config);
    await client.query('ROLLBACK');
    const ours = await collected(config);
    assert.ok(ours.rowCount && ours.rowCount > 0, `statement ${n} changed rows`);
    assert.deepStrictEqual(
      { rows: ours.rows, rowCount: ours.rowCount },
      { rows: theirs.rows, rowCount: theirs.rowCount },
    );
  }
  const { theirs, ours } = await both({ text: `SELECT * FROM ${table} ORDER BY id` });
  assert.deepStrictEqual(ours, theirs);
  assert.equal(ours.rows.length, 6);
});

test('CollectingQuery: the same text after its columns changed reads the new columns', { skip, timeout }, async () => {
  const config = { text: `SELECT * FROM ${table} WHERE id = 1` };
  const first = await collected(config);
  assert.deepStrictEqual(Object.keys(first.rows[0] as object), ['id', 'name', 'at']);
  await client.query(
    `ALTER TABLE ${table} ADD COLUMN amount int8 DEFAULT 7, ALTER COLUMN name TYPE int8 USING length(name)`,
  );
  const { theirs, ours } = await both(config);
  assert.deepStrictEqual(ours, theirs);
  // name was 'n1!' (the UPDATE above): its length, 3.
  assert.deepStrictEqual(ours.rows[0], { id: 1n, name: 3n, at: (first.rows[0] as { at: Date }).at, amount: 7n });
});

test('CollectingQuery: a failing statement fails as in pg, and the connection goes on', { skip, timeout }, async () => {
  const config = { text: 'SELECT g, 1 / (3 - g) AS q FROM generate_series(1, 5) AS g' };
  const theirs = await client.query(config).catch((error: unknown) => error);
  const ours = await collected(config).catch((error: unknown) => error);
  assert.ok(ours instanceof pg.DatabaseError);
  assert.ok(theirs instanceof pg.DatabaseError);
  assert.equal(ours.code, '22012');
  assert.equal(ours.message, theirs.message);
  assert.deepStrictEqual((await collected({ text: 'SELECT 1::int AS one' })).rows, [{ one: 1 }]);
});

test('CollectingQuery: columns of one name, the last one wins as in pg', { skip, timeout }, async () => {
  const { theirs, ours } = await both({ text: 'SELECT 1::int AS a, 2::int AS b, 3::int AS a' });
  assert.deepStrictEqual(ours, theirs);
  assert.deepStrictEqual(ours.rows, [{ a: 3, b: 2 }]);
});

test(
  'the db layer reads its rows here: pool statements, pipelined ones and a transaction',
  { skip, timeout },
  async () => {
    const db = await openDatabase({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir: tmpdir() });
    try {
      const pooled = `SELECT 1::int AS pooled, ${process.pid}::int AS pid`;
      const read = prepared(`pg_rows_read_${process.pid}`, 'SELECT 2::int8 AS piped');
      const write = prepared(`pg_rows_write_${process.pid}`, `SELECT 3::int AS written, now() AS at FOR UPDATE`);
      const inside = `SELECT 4::int AS inside, ${process.pid}::int AS pid`;
      assert.deepStrictEqual((await db.query(pooled)).rows, [{ pooled: 1, pid: process.pid }]);
      assert.deepStrictEqual((await db.query(read)).rows, [{ piped: 2n }]);
      assert.equal((await db.query<{ written: number }>(write)).rows[0]?.written, 3);
      assert.deepStrictEqual((await db.transaction((tx) => tx.query(inside))).rows, [{ inside: 4, pid: process.pid }]);
      assert.deepStrictEqual(keptColumns(pooled), ['pooled', 'pid']);
      assert.deepStrictEqual(keptColumns(read.name), ['piped']);
      assert.deepStrictEqual(keptColumns(write.name), ['written', 'at']);
      assert.deepStrictEqual(keptColumns(inside), ['inside', 'pid']);
    } finally {
      await db.close();
    }
  },
);
