import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type CamtEntry,
  centsToEur,
  eurToCents,
  isPlainText,
  normalizeCreditorReference,
  normalizeIban,
  type Party,
  readPain001,
  validateXml,
  writeCamt053,
  writeCamt054,
  writePain002,
} from '@paygate/iso20022';
import { writeFileAtomic } from '@paygate/simulator-kit';
import type { Logger } from 'pino';
import type { Account } from './config.js';
import type {
  BookingMode,
  CustomerSettings,
  EntryRecord,
  InstantMode,
  StatusFileRecord,
  TransferRecord,
  UploadRecord,
} from './model.js';
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
  /** What the customer has the bank send until the control changes it. */
  readonly customer: CustomerSettings;
  /** The length of the bank's day: a statement at the end of each, when the customer takes them. */
  readonly dayMs: number;
  /** The balance before the first statement, in cents. */
  readonly openingBalanceCents: number;
}

/** How soon an instant transfer is booked: within a second of its file being taken (SCT Inst: 10 s at most end to end). */
const INSTANT_BOOK_MS = 500;

const REASON = /^[A-Z0-9]{4}$/;
/** SEPA credit transfer issued (`ESCT`) and a returned one (`RRTN`), in the payments domain. */
const BOOKED_CODE = { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' } as const;
const RETURN_CODE = { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' } as const;
/** A SEPA credit transfer received (`RCDT`/`ESCT`). */
const RECEIVED_CODE = { domain: 'PMNT', family: 'RCDT', subFamily: 'ESCT' } as const;

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
  readonly instant?: boolean;
  readonly batchBooking?: boolean;
  readonly pmtInfId?: string;
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

  /** What the customer has the bank send (the control's setting, else the configuration's). */
  get customer(): CustomerSettings {
    return this.store.customer ?? this.options.customer;
  }

  #notifies(): boolean {
    return this.customer.reports !== 'statements';
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
      const instant = checked.instant === true;
      const pmtInfId = checked.pmtInfId ?? checked.msgId;
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
            bookAt: now + (instant ? Math.min(this.options.bookAfterMs, INSTANT_BOOK_MS) : this.options.bookAfterMs),
            reported: false,
            returns: [],
            instant,
            // An instant transfer is booked on its own, at once.
            batchBooking: !instant && (checked.batchBooking ?? this.customer.batchBooking),
            pmtInfId,
          },
        });
      }
      if (this.customer.statusReports === 'intermediate') {
        // Taken and validated: accepted technically (ACTC), before anything is booked.
        changes.push(
          this.#statusFile('pain.002', `ACTC ${checked.msgId}`, (msgId) =>
            writePain002({
              msgId,
              createdAt: new Date(now),
              originalMsgId: checked.msgId,
              groupStatus: 'ACTC',
              paymentInformation: [{ originalPaymentInformationId: pmtInfId, status: 'ACTC' }],
              transactions: [],
            }),
          ),
        );
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
    return {
      msgId,
      outcome: 'accepted',
      transfers: [...read.file.transactions],
      ...(read.file.instant === true ? { instant: true } : {}),
      ...(read.file.batchBooking !== undefined ? { batchBooking: read.file.batchBooking } : {}),
      pmtInfId: read.file.paymentInformationId,
    } satisfies Checked;
  }

  // ---------------------------------------------------------------- booking

  /**
   * Books every accepted transfer that is due; reports the bookings unless booking is held. An
   * instant transfer the bank cannot execute (the instant control's `reject`: the payee's bank did
   * not answer in time, `AB05`, …) is rejected instead, and told at once.
   */
  bookDue(): number {
    const now = this.clock();
    const due = [...this.store.transfers.values()].filter((t) => t.status === 'accepted' && t.bookAt <= now);
    if (due.length === 0) return 0;
    const changes: Change[] = [];
    const instantMode = this.store.instantMode;
    const refused = instantMode.mode === 'reject' ? due.filter((t) => t.instant === true) : [];
    if (refused.length > 0) changes.push(...this.#rejectInstant(refused, instantMode.reason ?? 'AB05'));
    const booked = due
      .filter((t) => !refused.includes(t))
      .map((transfer): TransferRecord => ({
        ...transfer,
        status: 'booked',
        bookedAt: now,
        accountServicerRef: this.#id('PGBR', this.#next()),
      }));
    changes.push(...booked.map((v): Change => ({ t: 'transfer', v })));
    if (this.store.mode === 'release') changes.push(...this.#report(booked));
    changes.push(this.#seqChange());
    this.store.commit(changes);
    if (booked.length > 0)
      this.log.info({ transfers: booked.length, held: this.store.mode === 'hold' }, 'transfers booked');
    this.flush();
    return booked.length;
  }

  /** The changes that reject instant transfers the bank could not execute: per file one pain.002, each transfer RJCT. */
  #rejectInstant(transfers: readonly TransferRecord[], reason: string): Change[] {
    const now = this.clock();
    const byFile = new Map<string, TransferRecord[]>();
    for (const transfer of transfers) byFile.set(transfer.msgId, [...(byFile.get(transfer.msgId) ?? []), transfer]);
    const changes: Change[] = [];
    for (const [original, list] of byFile) {
      changes.push(
        this.#statusFile('pain.002', `RJCT ${reason} ${list.length} instant of ${original}`, (msgId) =>
          writePain002({
            msgId,
            createdAt: new Date(now),
            originalMsgId: original,
            transactions: list.map((t) => ({ originalEndToEndId: t.endToEndId, status: 'RJCT', reason })),
          }),
        ),
      );
      for (const transfer of list) changes.push({ t: 'transfer', v: { ...transfer, status: 'rejected', reason } });
    }
    this.log.info({ transfers: transfers.length, reason }, 'instant transfers rejected');
    return changes;
  }

  /** Reports the bookings held so far (`pain.002` ACSC and `camt.054` DBIT per original file). */
  releaseHeld(): number {
    const held = [...this.store.transfers.values()].filter((t) => t.status === 'booked' && !t.reported);
    if (held.length === 0) return 0;
    this.store.commit([...this.#report(held), this.#seqChange()]);
    this.flush();
    return held.length;
  }

  /**
   * The changes that report `booked` transfers, per original file: the status reports the customer
   * takes (`intermediate`: ACSP for the block first; then the final ACSC or PART, each instant
   * transfer ACCC: credited to the payee; `rejections`: none), the entries on the account (one per
   * transfer, or one for the file's transfers when it is batch booked, with `NtryDtls/Btch`), a
   * `camt.054` of them when the customer takes notifications, and the transfers marked reported.
   */
  #report(booked: readonly TransferRecord[]): Change[] {
    const now = this.clock();
    const byFile = new Map<string, TransferRecord[]>();
    for (const transfer of booked) byFile.set(transfer.msgId, [...(byFile.get(transfer.msgId) ?? []), transfer]);
    const changes: Change[] = [];
    const customer = this.customer;
    for (const [original, transfers] of byFile) {
      const pmtInfId = transfers[0]?.pmtInfId ?? original;
      const inFile = [...this.store.transfers.values()].filter((t) => t.msgId === original).length;
      if (customer.statusReports === 'intermediate') {
        changes.push(
          this.#statusFile('pain.002', `ACSP ${original}`, (msgId) =>
            writePain002({
              msgId,
              createdAt: new Date(now),
              originalMsgId: original,
              paymentInformation: [{ originalPaymentInformationId: pmtInfId, status: 'ACSP' }],
              transactions: [],
            }),
          ),
        );
      }
      if (customer.statusReports !== 'rejections') {
        changes.push(
          this.#statusFile('pain.002', `ACSC ${transfers.length} of ${original}`, (msgId) =>
            writePain002({
              msgId,
              createdAt: new Date(now),
              originalMsgId: original,
              // The whole file booked: ACSC; some of it rejected before: partially accepted.
              groupStatus: transfers.length === inFile ? 'ACSC' : 'PART',
              paymentInformation: [{ originalPaymentInformationId: pmtInfId }],
              transactions: transfers.map((t) => ({
                originalEndToEndId: t.endToEndId,
                status: t.instant === true ? 'ACCC' : 'ACSC',
              })),
            }),
          ),
        );
      }
      const entries: EntryRecord[] =
        transfers[0]?.batchBooking === true
          ? [this.#batchEntry(original, pmtInfId, transfers, now)]
          : transfers.map((t) =>
              this.#entry(t.accountServicerRef ?? this.#id('PGBR', this.#next()), 'DBIT', t.amount, now, {
                bankTransactionCode: BOOKED_CODE,
                // One transaction per entry: the entry's reference is the transaction's.
                transactions: [
                  {
                    endToEndId: t.endToEndId,
                    accountServicerRef: t.accountServicerRef,
                    amount: t.amount,
                    currency: 'EUR',
                  },
                ],
              }),
            );
      changes.push(...entries.map((v): Change => ({ t: 'entry', v })));
      if (this.#notifies()) {
        changes.push(
          this.#statusFile('camt.054', `DBIT ${transfers.length} of ${original}`, (msgId) =>
            writeCamt054({
              msgId,
              createdAt: new Date(now),
              account: this.#party,
              entries: entries.map((e) => e.entry),
            }),
          ),
        );
      }
      for (const transfer of transfers) changes.push({ t: 'transfer', v: { ...transfer, reported: true } });
    }
    return changes;
  }

  /** An entry on the account, booked `at`. */
  #entry(
    ref: string,
    creditDebit: 'CRDT' | 'DBIT',
    amount: string,
    at: number,
    rest: Pick<CamtEntry, 'bankTransactionCode' | 'transactions'> & Partial<Pick<CamtEntry, 'batches'>>,
  ): EntryRecord {
    return {
      ref,
      creditDebit,
      amount,
      bookedAt: at,
      entry: {
        status: 'BOOK',
        creditDebit,
        amount,
        currency: 'EUR',
        bookingDate: day(at),
        accountServicerRef: ref,
        ...rest,
      },
    };
  }

  /** One DBIT entry for the transfers of a batch-booked file: `NtryDtls/Btch` with its MsgId, PmtInfId, count and total. */
  #batchEntry(msgId: string, pmtInfId: string, transfers: readonly TransferRecord[], at: number): EntryRecord {
    const cents = transfers.reduce((sum, t) => sum + (eurToCents(t.amount) ?? 0), 0);
    const amount = centsToEur(cents);
    return this.#entry(this.#id('PGBB', this.#next()), 'DBIT', amount, at, {
      bankTransactionCode: BOOKED_CODE,
      batches: [
        {
          msgId,
          paymentInformationId: pmtInfId,
          numberOfTransactions: transfers.length,
          totalAmount: amount,
          creditDebit: 'DBIT',
        },
      ],
      transactions: [],
    });
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
    const entry = this.#entry(ref, 'CRDT', returned, now, {
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
    });
    const file = this.#notifies()
      ? this.#statusFile('camt.054', `return ${transfer.endToEndId} ${reason} ${returned}`, (msgId) =>
          writeCamt054({ msgId, createdAt: new Date(now), account: this.#party, entries: [entry.entry] }),
        )
      : undefined;
    const record = { accountServicerRef: ref, amount: returned, reason, at: now, file: file?.v.name ?? '' };
    this.store.commit([
      { t: 'transfer', v: { ...transfer, returns: [...transfer.returns, record] } },
      { t: 'entry', v: entry },
      ...(file ? [file] : []),
      this.#seqChange(),
    ]);
    this.log.info({ endToEndId, accountServicerRef: ref, amount: returned, reason }, 'transfer returned');
    this.flush();
    return record;
  }

  /**
   * A credit transfer a payer sends to the customer's account (the payer paying a payment by bank
   * transfer): booked now as a `CRDT` entry, `PMNT`/`RCDT`/`ESCT`, with the payer in `RltdPties` and
   * the reference as the structured creditor reference (`Strd/CdtrRefInf/Ref`) or `text` as
   * `Ustrd`; in a `camt.054` when the customer takes notifications, and in the day's statement.
   */
  credit(input: { amount: string; reference?: string; text?: string; debtor: { name: string; iban: string } }): {
    accountServicerRef: string;
  } {
    const cents = eurToCents(input.amount);
    if (cents === undefined || cents <= 0)
      throw new BankError(400, 'amount must be a EUR amount such as "12.30", above 0');
    const iban = normalizeIban(input.debtor.iban);
    if (iban === undefined) throw new BankError(400, `debtor.iban "${input.debtor.iban}" is not a valid IBAN`);
    const name = input.debtor.name.trim();
    if (name === '' || name.length > 140 || !isPlainText(name)) {
      throw new BankError(400, 'debtor.name must be 1–140 characters, no control character');
    }
    if (input.reference === undefined && input.text === undefined) {
      throw new BankError(400, 'give the reference (structured) or a text (unstructured), or both');
    }
    let reference: string | undefined;
    if (input.reference !== undefined) {
      // As people write it (groups of four, any case): a creditor reference goes in its electronic form.
      reference = normalizeCreditorReference(input.reference) ?? input.reference.replace(/\s+/g, '');
      if (reference.length < 1 || reference.length > 35 || !isPlainText(reference)) {
        throw new BankError(400, 'reference must be 1–35 characters');
      }
    }
    const text = input.text?.trim();
    if (text !== undefined && (text === '' || text.length > 140 || !isPlainText(text))) {
      throw new BankError(400, 'text must be 1–140 characters, no control character');
    }
    const now = this.clock();
    const ref = this.#id('PGBC', this.#next());
    const amount = centsToEur(cents);
    const entry = this.#entry(ref, 'CRDT', amount, now, {
      bankTransactionCode: RECEIVED_CODE,
      transactions: [
        {
          accountServicerRef: ref,
          amount,
          currency: 'EUR',
          debtor: { name, iban },
          ...(reference !== undefined ? { creditorReferences: [reference] } : {}),
          ...(text !== undefined ? { unstructuredRemittance: [text] } : {}),
        },
      ],
    });
    const file = this.#notifies()
      ? this.#statusFile('camt.054', `credit ${amount} ${reference ?? text ?? ''}`, (msgId) =>
          writeCamt054({ msgId, createdAt: new Date(now), account: this.#party, entries: [entry.entry] }),
        )
      : undefined;
    this.store.commit([{ t: 'entry', v: entry }, ...(file ? [file] : []), this.#seqChange()]);
    this.log.info({ accountServicerRef: ref, amount, reference, text }, 'credit transfer received');
    this.flush();
    return { accountServicerRef: ref };
  }

  /** Changes what the customer has the bank send. */
  setCustomer(change: Partial<CustomerSettings>): CustomerSettings {
    const customer = { ...this.customer, ...change };
    this.store.commit([{ t: 'customer', v: customer }]);
    this.log.info(customer, 'customer settings');
    return customer;
  }

  /** Whether SEPA Instant transfers are executed or rejected (with `reason`, e.g. `AB05`: a timeout). */
  setInstant(mode: InstantMode): void {
    if (mode.reason !== undefined && !REASON.test(mode.reason)) {
      throw new BankError(400, 'reason must be a 4-character ISO code such as AB05');
    }
    this.store.commit([{ t: 'instant', v: mode }]);
    this.log.info(mode, 'instant transfers');
  }

  // ---------------------------------------------------------------- statements

  /** Where the statements stand: the last one's end and closing balance (the opening ones before the first). */
  #statementState(now: number) {
    return (
      this.store.statement ?? {
        seq: 0,
        until: Math.floor(now / this.options.dayMs) * this.options.dayMs,
        closingCents: this.options.openingBalanceCents,
      }
    );
  }

  /** Writes the day's statement once the bank's day is over, when the customer takes statements; whether it did. */
  closeDayIfDue(): boolean {
    if (this.customer.reports === 'notifications') return false;
    const now = this.clock();
    const state = this.#statementState(now);
    const dayStart = Math.floor(now / this.options.dayMs) * this.options.dayMs;
    if (dayStart <= state.until) {
      if (this.store.statement === undefined) this.store.commit([{ t: 'statement', v: state }]);
      return false;
    }
    this.#statement(state, dayStart);
    return true;
  }

  /** Writes a statement now, of everything booked since the last one (the test control). */
  sendStatement(): string {
    const now = this.clock();
    return this.#statement(this.#statementState(now), now);
  }

  /**
   * A `camt.053` of the period [the last statement's end, `until`): every entry reported and in no
   * statement yet, the opening balance the last one's closing, the closing balance after them.
   */
  #statement(state: { seq: number; until: number; closingCents: number }, until: number): string {
    const entries = [...this.store.entries.values()].filter((e) => e.statement === undefined && e.bookedAt < until);
    const opening = state.closingCents;
    const closing = entries.reduce(
      (sum, e) => sum + (e.creditDebit === 'CRDT' ? 1 : -1) * (eurToCents(e.amount) ?? 0),
      opening,
    );
    const balance = (type: 'OPBD' | 'CLBD', cents: number, at: number) => ({
      type,
      amount: centsToEur(Math.abs(cents)),
      currency: 'EUR',
      creditDebit: cents < 0 ? ('DBIT' as const) : ('CRDT' as const),
      date: day(at),
    });
    const seq = state.seq + 1;
    const from = state.until;
    const file = this.#statusFile('camt.053', `statement ${seq}: ${entries.length} entries`, (msgId) =>
      writeCamt053({
        msgId,
        createdAt: new Date(this.clock()),
        account: this.#party,
        statementId: `STMT-${this.store.instance}-${String(seq).padStart(6, '0')}`,
        sequenceNumber: seq,
        from: new Date(from),
        to: new Date(until),
        balances: [balance('OPBD', opening, from), balance('CLBD', closing, Math.max(from, until - 1))],
        entries: entries.map((e) => e.entry),
      }),
    );
    this.store.commit([
      file,
      ...entries.map((e): Change => ({ t: 'entry', v: { ...e, statement: file.v.name } })),
      { t: 'statement', v: { seq, until, closingCents: closing } },
      this.#seqChange(),
    ]);
    this.log.info({ file: file.v.name, entries: entries.length, closing: closing / 100 }, 'statement written');
    this.flush();
    return file.v.name;
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
