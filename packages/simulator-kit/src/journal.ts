import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './files.js';

/** What a simulator's store gives the journal: how to apply one change, and its whole state as a snapshot. */
export interface JournalState<Change, Snapshot> {
  /** Applies one change to the in-memory state (on load and on commit). */
  apply(change: Change): void;
  /** The whole in-memory state, written as the snapshot when the journal is compacted. */
  snapshot(): Snapshot;
  /** Loads a snapshot read from disk into the (empty) in-memory state. */
  restore(snapshot: Snapshot): void;
}

export interface JournalOptions {
  /** Compact the journal into the snapshot once it holds this many transactions (default 5,000). */
  readonly compactAfter?: number;
  /** Snapshot file name in the directory (default `state.json`). */
  readonly snapshotFile?: string;
  /** Journal file name in the directory (default `journal.jsonl`). */
  readonly journalFile?: string;
}

/**
 * A simulator's state made durable: an append-only journal (one JSON line per transaction, a
 * list of changes, fsynced before the caller answers anyone) over an atomically replaced
 * snapshot. Opening loads the snapshot and replays the journal — after a clean stop or a kill -9
 * alike — then compacts. A torn last line (the process died while writing it, so nobody was
 * answered) is dropped; damage before the last line refuses to open rather than lose
 * transactions silently. Node runs a simulator on one thread and every commit is synchronous, so
 * no two transactions interleave. The journal does not lock the directory: the simulator holds
 * the directory's lock (`lockDirectory`) for as long as it runs, since two writers of one journal
 * would each overwrite the other's snapshot.
 *
 * The record types stay with each simulator: it declares its `Change` union and `Snapshot`, and
 * keeps its maps; the journal only stores and replays them.
 */
export class Journal<Change, Snapshot> {
  readonly snapshotPath: string;
  readonly journalPath: string;
  readonly #state: JournalState<Change, Snapshot>;
  readonly #compactAfter: number;
  #fd = -1;
  #lines = 0;

  constructor(
    readonly dir: string,
    state: JournalState<Change, Snapshot>,
    options: JournalOptions = {},
  ) {
    this.#state = state;
    this.#compactAfter = options.compactAfter ?? 5_000;
    mkdirSync(dir, { recursive: true });
    this.snapshotPath = join(dir, options.snapshotFile ?? 'state.json');
    this.journalPath = join(dir, options.journalFile ?? 'journal.jsonl');
    this.#load();
  }

  #load(): void {
    if (existsSync(this.snapshotPath)) {
      this.#state.restore(JSON.parse(readFileSync(this.snapshotPath, 'utf8')) as Snapshot);
    }
    if (existsSync(this.journalPath)) {
      const lines = readFileSync(this.journalPath, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (line === '') return;
        let changes: Change[];
        try {
          changes = JSON.parse(line) as Change[];
        } catch (error) {
          // Only the last line can be torn; anything earlier is damage we must not paper over.
          if (index >= lines.length - 2) return;
          throw new Error(`${this.journalPath}: line ${index + 1} is not a transaction`, { cause: error });
        }
        for (const change of changes) this.#state.apply(change);
      });
    }
    this.#fd = this.#compact();
  }

  get closed(): boolean {
    return this.#fd < 0;
  }

  /** Makes the changes durable, then applies them in memory, as one transaction. */
  commit(changes: readonly Change[]): void {
    if (changes.length === 0) return;
    if (this.#fd < 0) throw new Error('the store is closed');
    writeSync(this.#fd, Buffer.from(`${JSON.stringify(changes)}\n`, 'utf8'));
    fsyncSync(this.#fd);
    for (const change of changes) this.#state.apply(change);
    if (++this.#lines >= this.#compactAfter) this.#fd = this.#compact();
  }

  /** Compacts (the snapshot holds everything, the journal is empty) and closes. Idempotent. */
  close(): void {
    if (this.#fd < 0) return;
    closeSync(this.#compact());
    this.#fd = -1;
  }

  /** Writes the whole state as the snapshot, then starts an empty journal; returns its descriptor. */
  #compact(): number {
    writeFileAtomic(this.snapshotPath, JSON.stringify(this.#state.snapshot()));
    // A crash between the snapshot and the truncation replays the old journal over the new
    // snapshot: every change is a whole record (or a delete), so replaying it again is harmless.
    if (this.#fd >= 0) closeSync(this.#fd);
    writeFileAtomic(this.journalPath, '');
    this.#lines = 0;
    return openSync(this.journalPath, 'a');
  }
}

/**
 * The part of a simulator's store that each simulator would otherwise repeat: the journal over
 * its own records, one transaction per `commit`, and `close`. A simulator extends it with its
 * records (its maps and fields, declared in its own package), says how one change applies to them
 * and what its snapshot holds, and calls {@link JournalStore.open} as the last line of its
 * constructor.
 */
export abstract class JournalStore<Change, Snapshot> {
  readonly #options: JournalOptions;
  #journal: Journal<Change, Snapshot> | undefined;

  constructor(
    readonly dir: string,
    options: JournalOptions = {},
  ) {
    this.#options = options;
  }

  /** Applies one change to the records in memory (on load and on commit). */
  protected abstract apply(change: Change): void;
  /** All the records, as the snapshot written when the journal is compacted. */
  protected abstract snapshot(): Snapshot;
  /** Loads a snapshot read from disk into the (empty) records. */
  protected abstract restore(snapshot: Snapshot): void;

  /**
   * Loads the state from the directory (snapshot, then journal). Not done by this constructor: a
   * subclass's fields (its maps) exist only once this constructor has returned, and loading
   * applies changes to them.
   */
  protected open(): void {
    this.#journal = new Journal<Change, Snapshot>(
      this.dir,
      {
        apply: (change) => this.apply(change),
        snapshot: () => this.snapshot(),
        restore: (snapshot) => this.restore(snapshot),
      },
      this.#options,
    );
  }

  get closed(): boolean {
    return this.#opened().closed;
  }

  /** Makes the changes durable, then applies them in memory, as one transaction. */
  commit(changes: readonly Change[]): void {
    this.#opened().commit(changes);
  }

  /** Compacts and closes. Idempotent. */
  close(): void {
    this.#opened().close();
  }

  #opened(): Journal<Change, Snapshot> {
    if (!this.#journal) throw new Error('the store was not opened (its constructor must call open())');
    return this.#journal;
  }
}
