import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type DirectoryLock, lockDirectory } from '@paygate/dir-lock';
import type { Charge, NotificationMode, OutboxEntry, Transfer } from './model.js';

/** One change to the state; a transaction is a list of them, written as one journal line. */
export type Change =
  | { readonly t: 'charge'; readonly v: Charge }
  | { readonly t: 'transfer'; readonly v: Transfer }
  | { readonly t: 'outbox'; readonly v: OutboxEntry }
  | { readonly t: 'outbox-done'; readonly key: string }
  | { readonly t: 'mode'; readonly v: NotificationMode };

interface Snapshot {
  readonly version: 1;
  readonly charges: Charge[];
  readonly transfers: Transfer[];
  readonly outbox: OutboxEntry[];
  readonly mode: NotificationMode;
}

/** Writes `data` to `path` so a reader (or a restart after kill -9) sees the old file or the new one, never a mix. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/** Compact the journal into the snapshot once it holds this many transactions. */
const COMPACT_AFTER = 5_000;

/**
 * The simulator's state: in memory, made durable by an append-only journal (one JSON line per
 * transaction, fsynced before the caller answers anyone) over an atomically replaced snapshot.
 * A restart — after a clean stop or a kill -9 — loads the snapshot and replays the journal; a
 * torn last line (the process died while writing it, so nobody was answered) is dropped.
 * Node runs the simulator on one thread and every transaction is synchronous, so no two
 * transactions interleave. The directory has one owner: a second simulator on it is refused
 * (`DirectoryInUseError`, naming the owner's pid) before it reads anything, since two writers of
 * one journal would each overwrite the other's snapshot.
 */
export class Store {
  readonly charges = new Map<string, Charge>();
  readonly transfers = new Map<string, Transfer>();
  readonly outbox = new Map<string, OutboxEntry>();
  readonly chargesByReference = new Map<string, string>();
  readonly transfersByReference = new Map<string, string>();
  mode: NotificationMode = { mode: 'normal' };
  /** Counts committed transactions since start (lets writers of derived files skip unchanged state). */
  version = 0;

  readonly #snapshotPath: string;
  readonly #journalPath: string;
  #journal = -1;
  #journalLines = 0;
  readonly #lock: DirectoryLock;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.#snapshotPath = join(dir, 'state.json');
    this.#journalPath = join(dir, 'journal.jsonl');
    this.#lock = lockDirectory(dir, 'paygate-psp');
    try {
      this.#load();
    } catch (error) {
      this.#lock.release();
      throw error;
    }
  }

  #load(): void {
    if (existsSync(this.#snapshotPath)) {
      const snapshot = JSON.parse(readFileSync(this.#snapshotPath, 'utf8')) as Snapshot;
      for (const v of snapshot.charges) this.#apply({ t: 'charge', v });
      for (const v of snapshot.transfers) this.#apply({ t: 'transfer', v });
      for (const v of snapshot.outbox) this.#apply({ t: 'outbox', v });
      this.mode = snapshot.mode;
    }
    if (existsSync(this.#journalPath)) {
      const lines = readFileSync(this.#journalPath, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (line === '') return;
        let changes: Change[];
        try {
          changes = JSON.parse(line) as Change[];
        } catch (error) {
          // Only the last line can be torn; anything earlier is damage we must not paper over.
          if (index >= lines.length - 2) return;
          throw new Error(`${this.#journalPath}: line ${index + 1} is not a transaction`, { cause: error });
        }
        for (const change of changes) this.#apply(change);
      });
    }
    this.#journal = this.#compact();
  }

  /** Applies the changes in memory and makes them durable, as one transaction. */
  commit(changes: readonly Change[]): void {
    if (changes.length === 0) return;
    const line = Buffer.from(`${JSON.stringify(changes)}\n`, 'utf8');
    writeSync(this.#journal, line);
    fsyncSync(this.#journal);
    for (const change of changes) this.#apply(change);
    this.version++;
    if (++this.#journalLines >= COMPACT_AFTER) this.#journal = this.#compact();
  }

  close(): void {
    if (this.#journal < 0) return;
    this.#journal = this.#compact();
    closeSync(this.#journal);
    this.#journal = -1;
    this.#lock.release();
  }

  #apply(change: Change): void {
    switch (change.t) {
      case 'charge':
        this.charges.set(change.v.id, change.v);
        this.chargesByReference.set(change.v.reference, change.v.id);
        break;
      case 'transfer':
        this.transfers.set(change.v.id, change.v);
        this.transfersByReference.set(change.v.reference, change.v.id);
        break;
      case 'outbox':
        this.outbox.set(change.v.key, change.v);
        break;
      case 'outbox-done':
        this.outbox.delete(change.key);
        break;
      case 'mode':
        this.mode = change.v;
        break;
    }
  }

  /** Writes the whole state as the snapshot, then starts an empty journal; returns its descriptor. */
  #compact(): number {
    const snapshot: Snapshot = {
      version: 1,
      charges: [...this.charges.values()],
      transfers: [...this.transfers.values()],
      outbox: [...this.outbox.values()],
      mode: this.mode,
    };
    writeFileAtomic(this.#snapshotPath, JSON.stringify(snapshot));
    // A crash between the snapshot and the truncation replays the old journal over the new
    // snapshot: every change is a whole record (or a delete), so replaying it again is harmless.
    if (this.#journal >= 0) closeSync(this.#journal);
    writeFileAtomic(this.#journalPath, '');
    this.#journalLines = 0;
    return openSync(this.#journalPath, 'a');
  }
}
