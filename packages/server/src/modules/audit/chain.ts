import { createHash } from 'node:crypto';

/** The `prev_hash` of the first entry of the trail. */
export const GENESIS_HASH = Buffer.alloc(32);

/** The fields of an entry the chain covers, as stored. */
export interface ChainedFields {
  readonly id: bigint;
  readonly at: Date;
  readonly actorKind: string;
  readonly actorEmail: string | null;
  readonly action: string;
  readonly merchant: string | null;
  readonly object: string | null;
  readonly detail: string | null;
  readonly ip: string | null;
  readonly requestId: string | null;
}

/**
 * The canonical serialization of an entry: a JSON array of its fields in a fixed order (id as a
 * decimal string, time as Unix milliseconds, absent values as null). JSON.stringify of strings,
 * numbers and null is deterministic, so the same row always gives the same text.
 */
export function canonical(fields: ChainedFields): string {
  return JSON.stringify([
    fields.id.toString(),
    fields.at.getTime(),
    fields.actorKind,
    fields.actorEmail,
    fields.action,
    fields.merchant,
    fields.object,
    fields.detail,
    fields.ip,
    fields.requestId,
  ]);
}

/** SHA-256 over the previous entry's hash and this entry's canonical serialization. */
export function entryHash(prevHash: Uint8Array, fields: ChainedFields): Buffer {
  return createHash('sha256').update(prevHash).update(canonical(fields), 'utf8').digest();
}

/**
 * JSON text with the keys of every object sorted, so a detail object hashes the same whatever
 * order its properties were built in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
