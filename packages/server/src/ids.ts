import { randomFillSync, randomInt } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Random bytes drawn from the CSPRNG 4 KiB at a time: every request gets a ULID request id, and
 * one call into the CSPRNG per 16 bytes cost more than the rest of the id (as node's own
 * randomUUID, which buffers the same way).
 */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

function randomIndexes(count: number): Buffer {
  if (entropyUsed + count > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  const bytes = entropy.subarray(entropyUsed, entropyUsed + count);
  entropyUsed += count;
  return bytes;
}

/** A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32; sorts by time. */
export function ulid(nowMs: number): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const random = randomIndexes(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += CROCKFORD[(random[i] as number) % 32];
  return time + tail;
}

/** Event ids: `evt_` and a ULID. */
export const newEventId = (nowMs: number) => `evt_${ulid(nowMs)}`;

/** What an event id looks like. */
export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Random lowercase alphanumerics of the given length (access keys, key ids). */
export function randomToken(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** Order numbers: a prefix (`P` payments, `W` payouts), the UTC date, and a database sequence value. */
export function orderNo(prefix: 'P' | 'W', now: Date, sequence: bigint): string {
  const date = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `${prefix}${date}${sequence.toString().padStart(10, '0')}`;
}
