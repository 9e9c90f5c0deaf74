import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CamtEntry,
  eurToCents,
  isPlainText,
  type Party,
  readPain001,
  validateXml,
  writeCamt054,
  writePain002,
} from '@paygate/iso20022';
import { writeFileAtomic } from '@paygate/simulator-kit';
import type { Logger } from 'pino';
import type { Account } from './config.js';
import type { BookingMode, StatusFileRecord, TransferRecord, UploadRecord } from './model.js';
import type { Change, Store } from './store.js';

/** A refused control, answered with its status and reason. */
export class BankError extends Error {
  override readonly name = 'BankError';
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** The customer's directories and the bank's own, all inside the data directory (one file system: renames are atomic). */
export interface BankPaths {
  /** The customer's SFTP root (it sees `/upload` and `/download` in it). */
  readonly root: string;
  readonly upload: string;
  readonly download: string;
  /** Where taken uploads are kept. */
  readonly received: string;
  /** Where status files are written before their rename into `download` (outside the customer's listing). */
  readonly tmp: string;
}

export function bankPaths(dataDir: string, username: string): BankPaths {
  const root = join(dataDir, 'sftp', username);
  return {
    root,
    upload: join(root, 'upload'),
    download: join(root, 'download'),
    received: join(dataDir, 'received'),
    tmp: join(dataDir, 'tmp'),
  };
}

export interface BankOptions {
  readonly dataDir: string;
  readonly paths: BankPaths;
  readonly account: Account;
  readonly bookAfterMs: number;
}

const REASON = /^[A-Z0-9]{4}$/;
/** SEPA credit transfer issued (`ESCT`) and a returned one (`RRTN`), in the payments domain. */
const BOOKED_CODE = { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' } as const;
const RETURN_CODE = { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' } as const;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The `MsgId` of a file that is not a valid pain.001, as far as it can be seen; else its name without `.xml`. */
function sniffMsgId(bytes: Buffer, name: string): string {
  const found = /<(?:[\w-]+:)?GrpHdr>\s*<(?:[\w-]+:)?MsgId>([^<]{1,35})<\//.exec(bytes.toString('utf8'))?.[1]?.trim();
  const candidate =
    found && isPlainText(found)
      ? found
      : name
          .replace(/\.xml$/, '')
          .slice(0, 35)
          .trim();
  return candidate !== '' && isPlainText(candidate) ? candidate : 'NOTPROVIDED';
}

/** What the checks of an uploaded file found. */
interface Checked {
  readonly msgId: string;
  readonly outcome: UploadRecord['outcome'];
  readonly reason?: 'FF01' | 'DU01';
  readonly detail?: string;
  readonly transfers: readonly { endToEndId: string; amount: string; creditor: Party }[];
}

/**
 * The bank's behaviour, apart from the SFTP transport: takes each complete `*.xml` in `/upload`,
 * checks it (the EPC pain.001.001.09 XSD, then the rules a bank adds: sums, IBANs, a `MsgId`
 * never taken before), answers with `pain.002` and `camt.054` files in `/download`, books
 * transfers when due, and carries out the test controls. Every decision is committed to the
 * journal (status files with their bytes) before anything appears in `/download`; `flush` then
 * writes what is not there yet, so a crash in between only delays a file.
 */
export class Bank {
  /** Paths in `/upload` open for writing by an SFTP session, with how many handles: not complete yet. */
  readonly writing = new Map<string, number>();

  constructor(
    readonly store: Store,
    readonly options: BankOptions,
    readonly log: Logger,
    readonly clock: () => number = Date.now,
  ) {
    for (const dir of [options.paths.upload, options.paths.download, options.paths.received, options.paths.tmp]) {
      mkdirSync(dir, { recursive: true, mode: 0o750 });
    }
  }

  // ---------------------------------------------------------------- identifiers

  #seq = 0;
  /** A fresh sequence number; the caller commits `seqChange()` with whatever uses it. */
  #next(): number {
    this.#seq = Math.max(this.#seq, this.store.seq) + 1;
    return this.#seq;
  }
  #seqChange(): Change {
    return { t: 'seq', v: this.#seq };
  }
  #id(prefix: string, seq: number): string {
    return `${prefix}-${this.store.instance}-${String(seq).padStart(8, '0')}`;
  }

  get #party(): Party {
    return { name: this.options.account.name, iban: this.options.account.iban, bic: this.options.account.bic };
  }

  // ---------------------------------------------------------------- uploads

  /** Takes every complete `*.xml` file in `/upload` (oldest name first); returns how many. */
  async takeUploads(): Promise<number> {
    const entries = await readdir(this.options.paths.upload, { withFileTypes: true });
    const names = entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.xml'))
      .map((entry) => entry.name)
      .filter((name) => !this.writing.has(join(this.options.paths.upload, name)))
      .sort();
    for (const name of names) await this.#take(name);
    return names.length;
  }

  async #take(name: string): Promise<void> {
    const path = join(this.options.paths.upload, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // renamed or removed meanwhile
      throw error;
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    // Taken before a crash that came between the journal line and the move: only the move is left.
    const leftover = [...this.store.uploads.values()].find(
      (upload) =>
        upload.name === name && upload.sha256 === sha256 && !existsSync(join(this.options.dataDir, upload.keptAs)),
    );
    if (leftover) {
      await rename(path, join(this.options.dataDir, leftover.keptAs));
      return;
    }

    const checked = await this.#check(bytes, name, sha256);
    const now = this.clock();
    const seq = this.#next();
    const keptAs = join('received', `${String(seq).padStart(8, '0')}-${name}`);
    const upload: UploadRecord = {
      name,
      size: bytes.length,
      sha256,
      takenAt: now,
      msgId: checked.msgId,
      outcome: checked.outcome,
      ...(checked.reason !== undefined ? { reason: checked.reason, detail: checked.detail } : {}),
      transfers: checked.transfers.length,
      keptAs,
    };
    const changes: Change[] = [{ t: 'upload', v: upload }];
    if (checked.outcome === 'accepted') {
      for (const tx of checked.transfers) {
        changes.push({
          t: 'transfer',
          v: {
            id: `${checked.msgId}/${tx.endToEndId}`,
            msgId: checked.msgId,
            endToEndId: tx.endToEndId,
            amount: tx.amount,
            creditor: { name: tx.creditor.name, iban: tx.creditor.iban, bic: tx.creditor.bic },
            status: 'accepted',
            takenAt: now,
            bookAt: now + this.options.bookAfterMs,
            reported: false,
            returns: [],
          },
        });
      }
    } else if (checked.outcome === 'rejected') {
      changes.push(
        this.#statusFile('pain.002', `RJCT ${checked.reason} ${checked.msgId}`, (msgId) =>
          writePain002({
            msgId,
            createdAt: new Date(now),
            originalMsgId: checked.msgId,
            groupStatus: 'RJCT',
            groupReason: checked.reason,
            transactions: [],
          }),
        ),
      );
    }
    changes.push(this.#seqChange());
    this.store.commit(changes);
    await rename(path, join(this.options.dataDir, keptAs));
    const level = checked.outcome === 'accepted' ? 'info' : 'warn';
    this.log[level](
      { file: name, msgId: checked.msgId, outcome: checked.outcome, reason: checked.reason, detail: checked.detail },
      checked.outcome === 'accepted'
        ? `file taken: ${checked.transfers.length} transfer(s) accepted`
        : checked.outcome === 'repeated'
          ? 'file taken again (same bytes as a file already taken): nothing more to answer'
          : `file rejected (${checked.reason})`,
    );
    this.flush();
  }

  async #check(bytes: Buffer, name: string, sha256: string): Promise<Checked> {
    const refuse = (reason: 'FF01' | 'DU01', detail: string, msgId = sniffMsgId(bytes, name)): Checked => ({
      msgId,
      outcome: 'rejected',
      reason,
      detail,
      transfers: [],
    });
    const valid = await validateXml(bytes, 'pain.001.001.09');
    if (!valid.valid) return refuse('FF01', `not valid against the EPC pain.001.001.09 XSD: ${valid.errors[0]}`);
    const read = readPain001(bytes);
    if (!read.ok) return refuse('FF01', read.reason);
    const msgId = read.file.msgId;
    const earlier = this.store.acceptedMsgIds.get(msgId);
    if (earlier) {
      if (earlier.sha256 === sha256) return { msgId, outcome: 'repeated', transfers: [] } satisfies Checked;
      return refuse('DU01', `MsgId ${msgId} was taken before (file ${earlier.name})`, msgId);
    }
    return { msgId, outcome: 'accepted', transfers: [...read.file.transactions] } satisfies Checked;
  }

  // ---------------------------------------------------------------- booking

  /** Books every accepted transfer that is due; reports the bookings unless booking is held. */
  bookDue(): number {
    const now = this.clock();
    const due = [...this.store.transfers.values()].filter((t) => t.status === 'accepted' && t.bookAt <= now);
    if (due.length === 0) return 0;
    const booked = due.map((transfer): TransferRecord => ({
      ...transfer,
      status: 'booked',
      bookedAt: now,
      accountServicerRef: this.#id('PGBR', this.#next()),
    }));
    const changes: Change[] = booked.map((v) => ({ t: 'transfer', v }));
    if (this.store.mode === 'release') changes.push(...this.#report(booked));
    changes.push(this.#seqChange());
    this.store.commit(changes);
    this.log.info({ transfers: booked.length, held: this.store.mode === 'hold' }, 'transfers booked');
    this.flush();
    return booked.length;
  }

  /** Reports the bookings held so far (`pain.002` ACSC and `camt.054` DBIT per original file). */
  releaseHeld(): number {
    const held = [...this.store.transfers.values()].filter((t) => t.status === 'booked' && !t.reported);
    if (held.length === 0) return 0;
    this.store.commit([...this.#report(held), this.#seqChange()]);
    this.flush();
    return held.length;
  }

  /** The changes that report `booked` transfers: per original file one `pain.002` and one `camt.054`, the transfers marked reported. */
  #report(booked: readonly TransferRecord[]): Change[] {
    const now = this.clock();
    const byFile = new Map<string, TransferRecord[]>();
    for (const transfer of booked) byFile.set(transfer.msgId, [...(byFile.get(transfer.msgId) ?? []), transfer]);
    const changes: Change[] = [];
    for (const [original, transfers] of byFile) {
      const inFile = [...this.store.transfers.values()].filter((t) => t.msgId === original).length;
      changes.push(
        this.#statusFile('pain.002', `ACSC ${transfers.length} of ${original}`, (msgId) =>
          writePain002({
            msgId,
            createdAt: new Date(now),
            originalMsgId: original,
            // The whole file booked: ACSC; some of it rejected before: partially accepted.
            groupStatus: transfers.length === inFile ? 'ACSC' : 'PART',
            transactions: transfers.map((t) => ({ originalEndToEndId: t.endToEndId, status: 'ACSC' })),
          }),
        ),
        this.#statusFile('camt.054', `DBIT ${transfers.length} of ${original}`, (msgId) =>
          writeCamt054({
            msgId,
            createdAt: new Date(now),
            account: this.#party,
            entries: transfers.map((t): CamtEntry => ({
              status: 'BOOK',
              creditDebit: 'DBIT',
              // One transaction per entry: the entry's reference is the transaction's.
              accountServicerRef: t.accountServicerRef,
              amount: t.amount,
              currency: 'EUR',
              bookingDate: day(t.bookedAt ?? now),
              bankTransactionCode: BOOKED_CODE,
              transactions: [
                {
                  endToEndId: t.endToEndId,
                  accountServicerRef: t.accountServicerRef,
                  amount: t.amount,
                  currency: 'EUR',
                },
              ],
            })),
          }),
        ),
      );
      for (const transfer of transfers) changes.push({ t: 'transfer', v: { ...transfer, reported: true } });
    }
    return changes;
  }

  // ---------------------------------------------------------------- controls

  /** The transfer a control names: the newest with this end-to-end id for which `usable` holds. */
  #find(endToEndId: string, usable: (t: TransferRecord) => boolean, what: string): TransferRecord {
    const all = this.store.transfersByEndToEndId(endToEndId);
    if (all.length === 0) throw new BankError(404, `no transfer with EndToEndId ${endToEndId}`);
    const found = all.find(usable);
    if (!found) {
      const latest = all[0] as TransferRecord;
      const state = latest.status === 'booked' && latest.reported ? 'booked and reported' : latest.status;
      throw new BankError(409, `transfer ${endToEndId} is ${state}: it cannot be ${what}`);
    }
    return found;
  }

  /**
   * Rejects a transfer before its booking was reported (`pain.002` with the transaction `RJCT`
   * and `reason`). A transfer booked while booking is held is rejected too: nobody was told.
   */
  reject(endToEndId: string, reason: string): void {
    if (!REASON.test(reason)) throw new BankError(400, 'reason must be a 4-character ISO code such as AC01');
    const transfer = this.#find(
      endToEndId,
      (t) => t.status === 'accepted' || (t.status === 'booked' && !t.reported),
      'rejected (only before its booking is reported)',
    );
    const now = this.clock();
    const { bookedAt: _b, accountServicerRef: _r, ...rest } = transfer;
    this.store.commit([
      { t: 'transfer', v: { ...rest, status: 'rejected', reason } },
      this.#statusFile('pain.002', `RJCT ${reason} ${transfer.endToEndId} of ${transfer.msgId}`, (msgId) =>
        writePain002({
          msgId,
          createdAt: new Date(now),
          originalMsgId: transfer.msgId,
          transactions: [{ originalEndToEndId: transfer.endToEndId, status: 'RJCT', reason }],
        }),
      ),
      this.#seqChange(),
    ]);
    this.log.info({ endToEndId, msgId: transfer.msgId, reason }, 'transfer rejected');
    this.flush();
  }

  /**
   * Returns a booked transfer (`camt.054` `CRDT` `BOOK` entry, `PMNT`/`ICDT`/`RRTN`, the reason
   * in `RtrInf/Rsn/Cd`, a fresh `AcctSvcrRef`), for its full amount unless `amount` is given. A
   * transfer whose booking is still held is returned at once: the return arrives before the
   * success.
   */
  returnTransfer(endToEndId: string, reason: string, amount?: string): ReturnRecordView {
    if (!REASON.test(reason)) throw new BankError(400, 'reason must be a 4-character ISO code such as AC04');
    const cents = amount === undefined ? undefined : eurToCents(amount);
    if (amount !== undefined && (cents === undefined || cents <= 0)) {
      throw new BankError(400, 'amount must be a EUR amount such as "12.30", above 0');
    }
    const transfer = this.#find(endToEndId, (t) => t.status === 'booked', 'returned (only once booked)');
    if (transfer.returns.some((r) => eurToCents(r.amount) === eurToCents(transfer.amount))) {
      throw new BankError(409, `transfer ${endToEndId} was returned already`);
    }
    const now = this.clock();
    const returned = amount ?? transfer.amount;
    const ref = this.#id('PGBR', this.#next());
    const file = this.#statusFile('camt.054', `return ${transfer.endToEndId} ${reason} ${returned}`, (msgId) =>
      writeCamt054({
        msgId,
        createdAt: new Date(now),
        account: this.#party,
        entries: [
          {
            status: 'BOOK',
            creditDebit: 'CRDT',
            accountServicerRef: ref,
            amount: returned,
            currency: 'EUR',
            bookingDate: day(now),
            bankTransactionCode: RETURN_CODE,
            transactions: [
              {
                endToEndId: transfer.endToEndId,
                accountServicerRef: ref,
                amount: returned,
                currency: 'EUR',
                returnReason: reason,
              },
            ],
          },
        ],
      }),
    );
    const record = { accountServicerRef: ref, amount: returned, reason, at: now, file: file.v.name };
    this.store.commit([
      { t: 'transfer', v: { ...transfer, returns: [...transfer.returns, record] } },
      file,
      this.#seqChange(),
    ]);
    this.log.info({ endToEndId, accountServicerRef: ref, amount: returned, reason }, 'transfer returned');
    this.flush();
    return record;
  }

  setMode(mode: BookingMode): void {
    if (mode !== this.store.mode) this.store.commit([{ t: 'mode', v: mode }]);
    this.log.info({ mode }, 'booking mode');
    if (mode === 'release') this.releaseHeld();
  }

  /** Writes a status file already sent again, the same bytes under a new name; returns the new name. */
  async duplicate(name: string): Promise<string> {
    const original = this.store.files.get(name);
    if (!original) throw new BankError(404, `no status file named ${name}`);
    const bytes = await readFile(join(this.options.paths.download, name), 'utf8');
    const copy = this.#statusFile(original.kind, `again: ${original.about}`, () => bytes, name, original.msgId);
    this.store.commit([copy, this.#seqChange()]);
    this.log.info({ file: name, copy: copy.v.name }, 'status file sent again');
    this.flush();
    return copy.v.name;
  }

  // ---------------------------------------------------------------- status files

  /** A status file to write: a fresh name and `MsgId`, its bytes kept in the record until `flush`. */
  #statusFile(
    kind: StatusFileRecord['kind'],
    about: string,
    build: (msgId: string) => string,
    duplicateOf?: string,
    sameMsgId?: string,
  ): { t: 'file'; v: StatusFileRecord } {
    const seq = this.#next();
    const msgId = sameMsgId ?? this.#id('PGB', seq);
    // Names sort in the order the bank wrote the files: the time, then the sequence number.
    const stamp = new Date(this.clock()).toISOString().replace(/[-:]|\.\d{3}/g, '');
    const name = `${stamp}-${String(seq).padStart(8, '0')}-${this.store.instance}-${kind}.xml`;
    return {
      t: 'file',
      v: {
        name,
        kind,
        msgId,
        about,
        createdAt: this.clock(),
        ...(duplicateOf !== undefined ? { duplicateOf } : {}),
        xml: build(msgId),
      },
    };
  }

  /**
   * Puts every recorded status file not yet in `/download` there: written under a temporary name
   * outside the customer's tree, fsynced, then renamed in, so a listing never shows half a file.
   */
  flush(): void {
    const written: Change[] = [];
    for (const file of this.store.files.values()) {
      if (file.xml === undefined) continue;
      writeFileAtomic(join(this.options.paths.download, file.name), file.xml, {
        mode: 0o640,
        temporary: join(this.options.paths.tmp, `${file.name}.${process.pid}.part`),
      });
      const { xml: _xml, ...rest } = file;
      written.push({ t: 'file', v: rest });
    }
    if (written.length > 0) this.store.commit(written);
  }
}

export type ReturnRecordView = TransferRecord['returns'][number];
