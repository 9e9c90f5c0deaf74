import assert from 'node:assert/strict';
import { test } from 'node:test';
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
