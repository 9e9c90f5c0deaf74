import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { parseTimestamptz } from '../src/db/timestamps.js';

const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => unknown;
const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = general(text);
  assert.equal(ours instanceof Date ? ours.getTime() : ours, theirs instanceof Date ? theirs.getTime() : theirs, text);
};

test('timestamptz text: the same instant as postgres-date gives, for every form PostgreSQL prints', () => {
  for (const text of [
    '2026-12-02 14:01:39+00',
    '2026-12-02 14:01:39.1+00',
    '2026-12-02 14:01:39.12+00',
    '2026-12-02 14:01:39.123+00',
    '2026-12-02 14:01:39.123456+00',
    '2026-12-02 14:01:39.999999+00',
    '2026-12-02 00:00:00-03',
    '2026-12-02 23:59:59.5+05:30',
    '1900-01-01 00:00:00+00:19:32',
    '2024-02-29 12:00:00.000001-09:30',
    '1970-01-01 00:00:00+00',
    '0099-06-01 00:00:00+00', // a year 0–99: the general parser
    '12026-01-01 00:00:00+00', // a year past 9999: the general parser
    '0044-03-15 12:00:00+00 BC',
    'infinity',
    '-infinity',
  ]) {
    same(text);
  }
});

test('timestamptz text: random instants from 1901 to 2100 with random offsets and fractions', () => {
  let seed = 20261202;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  for (let i = 0; i < 20_000; i++) {
    const at = new Date(Date.UTC(1901, 0, 1) + Math.floor(random() * 200 * 365.25 * 86_400_000));
    const digits = Math.floor(random() * 7);
    const fraction = digits === 0 ? '' : `.${String(Math.floor(random() * 10 ** digits)).padStart(digits, '0')}`;
    const minutes = Math.floor(random() * 4) * 15;
    const hours = Math.floor(random() * 15);
    const offset = `${random() < 0.5 ? '+' : '-'}${pad(hours)}${minutes === 0 ? '' : `:${pad(minutes)}`}`;
    same(
      `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())} ${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}${fraction}${offset}`,
    );
  }
});

test('timestamptz text: what is not a timestamp is left to the general parser', () => {
  for (const text of ['2026-12-02', '2026-12-02 14:01:39', '2026-12-02 14:0x:39+00', '2026-12-02T14:01:39+00']) {
    same(text);
  }
});

test(
  'timestamptz text: what PostgreSQL prints in several time zones reads as the instant it stored',
  { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' },
  async () => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      for (const zone of ['UTC', 'America/Sao_Paulo', 'Asia/Kolkata', 'Pacific/Chatham', 'Europe/Berlin']) {
        await client.query(`SET TimeZone = '${zone}'`);
        const { rows } = await client.query<{ text: string; ms: string }>(
          `SELECT at::text AS text, floor(extract(epoch FROM at) * 1000)::text AS ms
             FROM (SELECT timestamptz '2026-12-02 14:01:39.123456+00' + n * interval '7 days 3 hours 17.000321 seconds' AS at
                     FROM generate_series(-3000, 3000) AS n) AS t`,
        );
        for (const { text, ms } of rows) {
          same(text);
          assert.equal((parseTimestamptz(text) as Date).getTime(), Number(ms), `${zone}: ${text}`);
        }
      }
    } finally {
      await client.end();
    }
  },
);
