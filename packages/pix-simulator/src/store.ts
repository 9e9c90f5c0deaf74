import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { CobRecord, NotificationMode, OutboxEntry, WebhookRecord } from './model.js';

/** One change to the state; a transaction is a list of them, written as one journal line. */
export type Change =
  | { readonly t: 'cob'; readonly v: CobRecord }
  | { readonly t: 'webhook'; readonly v: WebhookRecord }
  | { readonly t: 'webhook-deleted'; readonly chave: string }
  | { readonly t: 'outbox'; readonly v: OutboxEntry }
  | { readonly t: 'outbox-done'; readonly key: string }
  | { readonly t: 'mode'; readonly v: NotificationMode }
  | { readonly t: 'token-epoch'; readonly v: number };

interface Snapshot {
  readonly version: 1;
  readonly cobs: CobRecord[];
  readonly webhooks: WebhookRecord[];
  readonly outbox: OutboxEntry[];
  readonly mode: NotificationMode;
  readonly tokenEpoch: number;
}

/** Writes `data` to `path` so a reader (or a restart after kill -9) sees the old file or the new one, never a mix. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

const COMPACT_AFTER = 5_000;

/**
 * The simulator's state: in memory, made durable by an append-only journal (one JSON line per
 * transaction, fsynced before anyone is answered) over an atomically replaced snapshot. A restart
 * — after a clean stop or a kill -9 — loads the snapshot and replays the journal; a torn last line
 * (the process died writing it, so nobody was answered) is dropped. One thread and synchronous
 * transactions: no two interleave. The caller holds the directory's lock (lock.ts).
 */
export class Store {
  readonly cobs = new Map<string, CobRecord>();
  readonly webhooks = new Map<string, WebhookRecord>();
  readonly outbox = new Map<string, OutboxEntry>();
  mode: NotificationMode = 'normal';
  /** Tokens issued under an older epoch are revoked. */
  tokenEpoch = 0;

  readonly #snapshotPath: string;
  readonly #journalPath: string;
  #journal = -1;
  #journalLines = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.#snapshotPath = join(dir, 'state.json');
    this.#journalPath = join(dir, 'journal.jsonl');
    if (existsSync(this.#snapshotPath)) {
      const snapshot = JSON.parse(readFileSync(this.#snapshotPath, 'utf8')) as Snapshot;
      for (const v of snapshot.cobs) this.#apply({ t: 'cob', v });
      for (const v of snapshot.webhooks) this.#apply({ t: 'webhook', v });
      for (const v of snapshot.outbox) this.#apply({ t: 'outbox', v });
      this.mode = snapshot.mode;
      this.tokenEpoch = snapshot.tokenEpoch;
    }
    if (existsSync(this.#journalPath)) {
      const lines = readFileSync(this.#journalPath, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (line === '') return;
        let changes: Change[];
        try {
          changes = JSON.parse(line) as Change[];
        } catch (error) {
          if (index >= lines.length - 2) return; // only the last line can be torn
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
    if (this.#journal < 0) throw new Error('the store is closed');
    writeSync(this.#journal, Buffer.from(`${JSON.stringify(changes)}\n`, 'utf8'));
    fsyncSync(this.#journal);
    for (const change of changes) this.#apply(change);
    if (++this.#journalLines >= COMPACT_AFTER) this.#journal = this.#compact();
  }

  close(): void {
    if (this.#journal < 0) return;
    this.#journal = this.#compact();
    closeSync(this.#journal);
    this.#journal = -1;
  }

  #apply(change: Change): void {
    switch (change.t) {
      case 'cob':
        this.cobs.set(change.v.txid, change.v);
        break;
      case 'webhook':
        this.webhooks.set(change.v.chave, change.v);
        break;
      case 'webhook-deleted':
        this.webhooks.delete(change.chave);
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
      case 'token-epoch':
        this.tokenEpoch = change.v;
        break;
    }
  }

  #compact(): number {
    const snapshot: Snapshot = {
      version: 1,
      cobs: [...this.cobs.values()],
      webhooks: [...this.webhooks.values()],
      outbox: [...this.outbox.values()],
      mode: this.mode,
      tokenEpoch: this.tokenEpoch,
    };
    writeFileAtomic(this.#snapshotPath, JSON.stringify(snapshot));
    // A crash between the snapshot and the truncation replays the old journal over the new
    // snapshot: every change is a whole record (or a delete), so replaying it is harmless.
    if (this.#journal >= 0) closeSync(this.#journal);
    writeFileAtomic(this.#journalPath, '');
    this.#journalLines = 0;
    return openSync(this.#journalPath, 'a');
  }
}
