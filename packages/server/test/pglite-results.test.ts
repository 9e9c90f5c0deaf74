import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parse, PGlite, protocol } from '@electric-sql/pglite';
import { readResults } from '../src/db/pglite-results.js';

// The embedded database's answers read from its bytes (db/pglite-results.ts) against PGlite's own
// reading of the same exchange: the same rows, values, counts and errors.

const parseInt8 = (value: string) => BigInt(value);
let db: PGlite;

before(async () => {
  db = new PGlite({ parsers: { 20: parseInt8 } });
  await db.waitReady;
  await db.exec(`CREATE TABLE t (id bigint PRIMARY KEY, name text NOT NULL, at timestamptz, doc jsonb, raw bytea,
                                 n numeric, ok boolean, tags text[], small int, CONSTRAINT name_short CHECK (length(name) < 40))`);
});
after(() => db.close());

const concat = (parts: Uint8Array[]) => Buffer.concat(parts.map((part) => Buffer.from(part)));
const { serialize } = protocol;
/** One extended-protocol exchange of each statement, as db.ts sends it, then Sync. */
const exchange = (statements: { text: string; values?: (string | null)[] }[]) =>
  concat([
    ...statements.flatMap(({ text, values = [] }) => [
      serialize.parse({ text }),
      serialize.bind({ values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
    ]),
    serialize.sync(),
  ]);

async function both(statements: { text: string; values?: (string | null)[] }[]) {
  const message = exchange(statements);
  // Each reading in a transaction of its own, rolled back: both see the same table.
  await db.exec('BEGIN');
  let theirs: { results?: unknown; error?: unknown };
  try {
    const { messages } = await db.execProtocol(message, { syncToFs: false });
    theirs = {
      results: parse.parseResults(messages, db.parsers).map((r) => ({ rows: r.rows, affectedRows: r.affectedRows })),
    };
  } catch (error) {
    theirs = { error };
  }
  await db.exec('ROLLBACK');
  await db.exec('BEGIN');
  const answer: Buffer[] = [];
  await db.execProtocolRawStream(message, { syncToFs: false, onRawData: (chunk) => answer.push(Buffer.from(chunk)) });
  await db.exec('ROLLBACK');
  const ours = readResults(Buffer.concat(answer), db.parsers);
  return { theirs, ours };
}

test('rows, values of every type the platform reads, NULLs and counts: as PGlite reads them', async () => {
  const { theirs, ours } = await both([
    {
      text: `INSERT INTO t VALUES (1, 'ação ✓ 🙂', '2026-12-02 14:01:39.123456+00', '{"a":[1,"x"]}', '\\x00ff10',
                               '12.3400', true, '{a,"b c",NULL}', 7),
                              (9007199254740993, 'plain', NULL, NULL, NULL, NULL, NULL, NULL, NULL)
             RETURNING *`,
    },
    { text: 'SELECT * FROM t ORDER BY id' },
    { text: 'UPDATE t SET small = $1 WHERE id > $2', values: ['3', '0'] },
    { text: 'SELECT count(*) AS n, max(at) AS latest, $1::text AS echo FROM t', values: ['e'] },
    { text: 'SELECT 1 AS one WHERE false' },
  ]);
  assert.equal(ours.error, undefined);
  assert.deepEqual(ours.results, theirs.results);
  const rows = ours.results[1]?.rows as Record<string, unknown>[];
  assert.equal(rows[0]?.name, 'ação ✓ 🙂');
  assert.equal(rows[1]?.id, 9007199254740993n);
  assert.deepEqual(
    ours.results.map((r) => r.affectedRows),
    [2, 2, 4, 4, 4],
  );
});

test('an error: PGlite’s DatabaseError with its code, constraint and message, the first one only', async () => {
  const { theirs, ours } = await both([
    { text: `INSERT INTO t (id, name) VALUES (2, repeat('x', 50))` },
    { text: 'SELECT 1' },
  ]);
  const expected = theirs.error as Record<string, unknown>;
  assert.ok(ours.error);
  assert.equal(ours.error.message, expected.message);
  for (const field of ['severity', 'code', 'detail', 'table', 'constraint', 'schema', 'routine'] as const) {
    assert.equal(ours.error[field], expected[field], field);
  }
  assert.equal(ours.error.code, '23514');
  assert.equal(ours.error.constraint, 'name_short');
});

test('a unique violation names its constraint and detail; a syntax error its position', async () => {
  for (const text of [`INSERT INTO t (id, name) VALUES (1, 'once'), (1, 'again')`, 'SELEC 1']) {
    const { theirs, ours } = await both([{ text }]);
    const expected = theirs.error as Record<string, unknown>;
    assert.ok(ours.error, text);
    for (const field of ['message', 'code', 'detail', 'constraint', 'position'] as const) {
      assert.equal(ours.error[field], expected[field], `${text}: ${field}`);
    }
  }
});

test('a truncated answer is refused, not read short', () => {
  const bytes = Buffer.from([0x43, 0, 0, 0, 20, 0x53, 0x45]);
  assert.throws(() => readResults(bytes, db.parsers), /truncated/);
});
