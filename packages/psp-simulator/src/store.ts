import { type DirectoryLock, JournalStore, lockDirectory } from '@paygate/simulator-kit';
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

/**
 * The simulator's state: in memory, made durable by the kit's journal (one JSON line per
 * transaction, fsynced before the caller answers anyone, over an atomically replaced snapshot;
 * a restart after a clean stop or a kill -9 replays it, a torn last line is dropped). The
 * directory has one owner: a second simulator on it is refused (`DirectoryInUseError`, naming
 * the owner's pid) before it reads anything, since two writers of one journal would each
 * overwrite the other's snapshot.
 */
export class Store extends JournalStore<Change, Snapshot> {
  readonly charges = new Map<string, Charge>();
  readonly transfers = new Map<string, Transfer>();
  readonly outbox = new Map<string, OutboxEntry>();
  readonly chargesByReference = new Map<string, string>();
  readonly transfersByReference = new Map<string, string>();
  mode: NotificationMode = { mode: 'normal' };
  /** Counts committed transactions since start (lets writers of derived files skip unchanged state). */
  version = 0;

  readonly #lock: DirectoryLock;

  constructor(dir: string) {
    super(dir);
    this.#lock = lockDirectory(dir, 'paygate-psp');
    try {
      this.open();
    } catch (error) {
      this.#lock.release();
      throw error;
    }
  }

  override commit(changes: readonly Change[]): void {
    if (changes.length === 0) return;
    super.commit(changes);
    this.version++;
  }

  override close(): void {
    if (this.closed) return;
    super.close();
    this.#lock.release();
  }

  protected override snapshot(): Snapshot {
    return {
      version: 1,
      charges: [...this.charges.values()],
      transfers: [...this.transfers.values()],
      outbox: [...this.outbox.values()],
      mode: this.mode,
    };
  }

  protected override restore(snapshot: Snapshot): void {
    for (const v of snapshot.charges) this.apply({ t: 'charge', v });
    for (const v of snapshot.transfers) this.apply({ t: 'transfer', v });
    for (const v of snapshot.outbox) this.apply({ t: 'outbox', v });
    this.mode = snapshot.mode;
  }

  protected override apply(change: Change): void {
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
}
