import pg from 'pg';

/** What `pg` makes of a `timestamptz` by default (postgres-date): every form PostgreSQL prints. */
const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date | number | null;

const ZERO = 48;
const digit = (text: string, at: number): number => {
  const value = text.charCodeAt(at) - ZERO;
  return value >= 0 && value <= 9 ? value : Number.NaN;
};
const two = (text: string, at: number): number => digit(text, at) * 10 + digit(text, at + 1);

/**
 * A `timestamptz` as PostgreSQL prints it with `DateStyle` ISO, the common form read without a
 * regular expression: `YYYY-MM-DD HH:MM:SS[.f…]±HH[:MM[:SS]]`, a year of four digits (AD). Every
 * other form (a year past 9999, BC, `infinity`) goes to the general parser, and the answer is the
 * same `Date` it gives (the fraction truncated to milliseconds). Every timestamp the hot paths
 * read (orders' creation, update, expiry and finality) goes through here: postgres-date's
 * expressions were 5 % of what a read costs the server beyond the auth-only ceiling (the
 * 2026-12-02 profile of the shop mix, PostgreSQL).
 */
export function parseTimestamptz(text: string): Date | number | null {
  const length = text.length;
  if (
    length < 22 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 || // space
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58
  ) {
    return general(text);
  }
  const year = two(text, 0) * 100 + two(text, 2);
  const month = two(text, 5);
  const day = two(text, 8);
  const hour = two(text, 11);
  const minute = two(text, 14);
  const second = two(text, 17);
  let at = 19;
  let millisecond = 0;
  if (text.charCodeAt(at) === 46) {
    // .: up to microseconds; the first three digits are the milliseconds, the rest truncated.
    at++;
    const first = at;
    for (let value = digit(text, at); !Number.isNaN(value); value = digit(text, ++at)) {
      if (at - first < 3) millisecond += value * 10 ** (2 - (at - first));
    }
  }
  const sign = text.charCodeAt(at);
  if (sign !== 43 && sign !== 45) return general(text); // + or -
  let offset = two(text, at + 1) * 3_600_000;
  at += 3;
  if (at < length && text.charCodeAt(at) === 58) {
    offset += two(text, at + 1) * 60_000;
    at += 3;
    if (at < length && text.charCodeAt(at) === 58) {
      offset += two(text, at + 1) * 1_000;
      at += 3;
    }
  }
  if (at !== length || year < 100) return general(text);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millisecond) - (sign === 43 ? offset : -offset);
  return Number.isNaN(utc) ? general(text) : new Date(utc);
}
