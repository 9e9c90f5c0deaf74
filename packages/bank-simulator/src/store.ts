import { randomBytes } from 'node:crypto';
import { JournalStore } from '@paygate/simulator-kit';
import type {
  BookingMode,
  CustomerSettings,
  EntryRecord,
  InstantMode,
  StatementState,
  StatusFileRecord,
  TransferRecord,
  UploadRecord,
} from './model.js';

/** One change to the state; a transaction is a list of them, written as one journal line. */
export type Change =
  | { readonly t: 'upload'; readonly v: UploadRecord }
  | { readonly t: 'transfer'; readonly v: TransferRecord }
  | { readonly t: 'file'; readonly v: StatusFileRecord }
  | { readonly t: 'mode'; readonly v: BookingMode }
  | { readonly t: 'seq'; readonly v: number }
  | { readonly t: 'entry'; readonly v: EntryRecord }
  | { readonly t: 'customer'; readonly v: CustomerSettings }
  | { readonly t: 'instant'; readonly v: InstantMode }
  | { readonly t: 'statement'; readonly v: StatementState };

interface Snapshot {
  readonly version: 1;
  readonly instance: string;
  readonly seq: number;
  readonly mode: BookingMode;
  readonly uploads: UploadRecord[];
  readonly transfers: TransferRecord[];
  readonly files: StatusFileRecord[];
  // Since the bank sends statements, batch bookings and instant files (absent from older snapshots).
  readonly entries?: EntryRecord[];
  readonly customer?: CustomerSettings;
  readonly instantMode?: InstantMode;
  readonly statement?: StatementState;
}

/**
 * The bank's state: in memory, made durable by the kit's journal (one fsynced JSON line per
 * transaction over an atomically replaced snapshot; a restart after a kill -9 replays it). It
 * remembers every `MsgId` taken, across restarts, for the duplicate check. The caller holds the
 * data directory's lock.
 */
export class Store extends JournalStore<Change, Snapshot> {
  /** Every file taken from `/upload`, by where it is kept (unique). */
  readonly uploads = new Map<string, UploadRecord>();
  readonly transfers = new Map<string, TransferRecord>();
  readonly files = new Map<string, StatusFileRecord>();
  /** `MsgId` → the accepted upload that carried it. */
  readonly acceptedMsgIds = new Map<string, UploadRecord>();
  mode: BookingMode = 'release';
  /** Every booking on the account, by its `AcctSvcrRef`, in the order booked. */
  readonly entries = new Map<string, EntryRecord>();
  /** What the customer has the bank send; set from the configuration at first start, then by the control. */
  customer: CustomerSettings | undefined;
  instantMode: InstantMode = { mode: 'execute' };
  statement: StatementState | undefined;
  /** Makes the bank's identifiers and file names unique across its restarts and other data directories. */
  instance = randomBytes(3).toString('hex').toUpperCase();
  /** The last sequence number handed out (identifiers, file names). */
  seq = 0;

  constructor(dir: string) {
    super(dir);
    this.open();
  }

  /** The transfers with this end-to-end id, newest first. */
  transfersByEndToEndId(endToEndId: string): TransferRecord[] {
    return [...this.transfers.values()].filter((t) => t.endToEndId === endToEndId).reverse();
  }

  protected override snapshot(): Snapshot {
    return {
      version: 1,
      instance: this.instance,
      seq: this.seq,
      mode: this.mode,
      uploads: [...this.uploads.values()],
      transfers: [...this.transfers.values()],
      files: [...this.files.values()],
      entries: [...this.entries.values()],
      ...(this.customer !== undefined ? { customer: this.customer } : {}),
      instantMode: this.instantMode,
      ...(this.statement !== undefined ? { statement: this.statement } : {}),
    };
  }

  protected override restore(snapshot: Snapshot): void {
    this.instance = snapshot.instance;
    this.seq = snapshot.seq;
    this.mode = snapshot.mode;
    for (const v of snapshot.uploads) this.apply({ t: 'upload', v });
    for (const v of snapshot.transfers) this.apply({ t: 'transfer', v });
    for (const v of snapshot.files) this.apply({ t: 'file', v });
    for (const v of snapshot.entries ?? []) this.apply({ t: 'entry', v });
    if (snapshot.customer !== undefined) this.customer = snapshot.customer;
    if (snapshot.instantMode !== undefined) this.instantMode = snapshot.instantMode;
    if (snapshot.statement !== undefined) this.statement = snapshot.statement;
  }

  protected override apply(change: Change): void {
    switch (change.t) {
      case 'upload':
        this.uploads.set(change.v.keptAs, change.v);
        if (change.v.outcome === 'accepted') this.acceptedMsgIds.set(change.v.msgId, change.v);
        break;
      case 'transfer':
        this.transfers.set(change.v.id, change.v);
        break;
      case 'file':
        this.files.set(change.v.name, change.v);
        break;
      case 'mode':
        this.mode = change.v;
        break;
      case 'seq':
        this.seq = Math.max(this.seq, change.v);
        break;
      case 'entry':
        this.entries.set(change.v.ref, change.v);
        break;
      case 'customer':
        this.customer = change.v;
        break;
      case 'instant':
        this.instantMode = change.v;
        break;
      case 'statement':
        this.statement = change.v;
        break;
    }
  }
}
