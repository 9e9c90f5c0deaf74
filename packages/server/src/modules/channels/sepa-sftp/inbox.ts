import { createHash } from 'node:crypto';
import { type BankFile, type Camt054, type Pain002, readBankFile } from '@paygate/iso20022';
import type { Queryable } from '../../../db/db.js';
import { parseAmount } from '../../../money.js';
import { applyUpdate, type ApplyOutcome, type ChannelServices } from '../apply.js';
import type { ChannelStatus } from '../connector.js';
import type { FileStepOptions } from './outbox.js';
import type { SepaSftpConnector } from './sepa-sftp.js';

/** The largest bank file read (a day's camt.054 of a very busy account is a few MB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** What one inbox step did. */
export interface InboxResult {
  readonly applied: readonly string[];
  readonly setAside: readonly { readonly name: string; readonly reason: string }[];
}

/** A payout of one of the channel's files, as the bank's files are matched against. */
interface Member {
  order_no: string;
  merchant_id: bigint;
  amount_minor: bigint;
  msg_id: string;
}

/** A file that is not applied: recorded as set aside with this reason, nothing in it applied. */
class SetAside extends Error {}

/**
 * Reads the channel's download directory (one step, every `pollEvery`): lists it, fetches each
 * file not recorded yet (oldest first), and records and applies each in ONE transaction per file
 * (its name, size and SHA-256 in `sepa_inbox`, unique per channel and name, and every payout
 * change it brings through `applyUpdate`, the path every channel's news takes): a file is applied
 * once, as a whole or not at all, whatever the instances. A file that does not parse, or is
 * neither a pain.002 nor a camt.054, or reports on a file this channel never sent, is set aside
 * (recorded with its reason, a log line, `paygate_sepa_files_set_aside_total`), nothing in it
 * applied; the files after it still are. Nothing in the directory is ever deleted or renamed.
 */
export async function readInboxOnce(
  services: ChannelServices,
  connector: SepaSftpConnector,
  options: FileStepOptions,
): Promise<InboxResult> {
  const dir = connector.settings.downloadDir;
  const listed = await connector.sftp.use((ops) => ops.list(dir));
  if (listed.length === 0) return { applied: [], setAside: [] };
  const known = await services.db.query<{ name: string }>(
    'SELECT name FROM sepa_inbox WHERE channel = $1 AND name = ANY($2::text[])',
    [connector.name, listed.map((file) => file.name)],
  );
  const seen = new Set(known.rows.map((row) => row.name));
  const fresh = listed
    .filter((file) => !seen.has(file.name) && !file.name.startsWith('.'))
    .sort((a, b) => a.mtime - b.mtime || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const applied: string[] = [];
  const setAside: { name: string; reason: string }[] = [];
  for (const file of fresh) {
    const bytes = await connector.sftp.use((ops) => ops.read(`${dir}/${file.name}`, MAX_FILE_BYTES));
    if (bytes.length !== file.size) {
      // Still being written (or rewritten) by the bank: read again at the next poll, whole.
      options.log.info(
        { channel: connector.name, file: file.name, listed: file.size, read: bytes.length },
        'sepa bank file changed while read; read again at the next poll',
      );
      continue;
    }
    const outcome = await applyFile(services, connector, file.name, bytes, options);
    if (outcome.kind === 'applied') {
      applied.push(file.name);
      options.metrics?.sepaFile(connector.name, 'applied');
      options.log.info({ channel: connector.name, file: file.name, ...outcome.counts }, 'sepa bank file applied');
    } else if (outcome.kind === 'set_aside') {
      setAside.push({ name: file.name, reason: outcome.reason });
      options.metrics?.sepaFile(connector.name, 'set_aside');
      options.log.warn(
        { channel: connector.name, file: file.name, reason: outcome.reason },
        'sepa bank file set aside: nothing in it applied',
      );
    }
  }
  return { applied, setAside };
}

type FileOutcome =
  | { readonly kind: 'applied'; readonly counts: Partial<Record<ApplyOutcome, number>> }
  | { readonly kind: 'set_aside'; readonly reason: string }
  | { readonly kind: 'recorded_elsewhere' };

/** Records one bank file and applies it, in one transaction. */
export async function applyFile(
  services: ChannelServices,
  connector: SepaSftpConnector,
  name: string,
  bytes: Buffer,
  options: FileStepOptions,
): Promise<FileOutcome> {
  const parsed = readBankFile(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const record = (tx: Queryable, state: 'applied' | 'set_aside', message: string | null, reason: string | null) =>
    tx.query<{ id: bigint }>(
      `INSERT INTO sepa_inbox (channel, name, size, sha256, message, state, reason, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (channel, name) DO NOTHING RETURNING id`,
      [connector.name, name, bytes.length, sha256, message, state, reason, new Date(services.now())],
    );
  const setAside = async (reason: string): Promise<FileOutcome> => {
    const inserted = await record(
      services.db,
      'set_aside',
      parsed.ok ? parsed.file.kind : null,
      reason.slice(0, 1_000),
    );
    return inserted.rows.length === 0 ? { kind: 'recorded_elsewhere' } : { kind: 'set_aside', reason };
  };
  if (!parsed.ok) return setAside(parsed.reason);
  try {
    return await services.db.transaction(async (tx): Promise<FileOutcome> => {
      const inserted = await record(tx, 'applied', parsed.file.kind, null);
      if (inserted.rows.length === 0) return { kind: 'recorded_elsewhere' };
      const counts: Partial<Record<ApplyOutcome, number>> = {};
      const apply = new FileApplier(services, connector, tx, options, counts);
      await apply.file(parsed.file);
      await apply.flush();
      return { kind: 'applied', counts };
    });
  } catch (error) {
    if (error instanceof SetAside) return setAside(error.message);
    throw error;
  }
}

/** Applies one parsed bank file inside its transaction. */
class FileApplier {
  /** The bank's word on each payout, written once per file (`flush`). */
  private readonly said = new Map<string, { status: string; reason: string | null }>();
  /** The files the bank said something of. */
  private readonly acknowledged = new Set<string>();
  /**
   * SUCCEEDED and FAILED moves gathered to be applied together (`settle`): thousands of payouts
   * of one file in a few statements. The first word on a payout wins, as it would one by one.
   */
  private readonly pending = new Map<string, { member: Member; status: 'SUCCEEDED' | 'FAILED' }>();

  constructor(
    private readonly services: ChannelServices,
    private readonly connector: SepaSftpConnector,
    private readonly tx: Queryable,
    private readonly options: FileStepOptions,
    private readonly counts: Partial<Record<ApplyOutcome, number>>,
  ) {}

  file(file: BankFile): Promise<void> {
    return file.kind === 'pain.002' ? this.pain002(file) : this.camt054(file);
  }

  /**
   * A status report on one of the channel's files (OrgnlMsgId): each transaction's TxSts by
   * OrgnlEndToEndId — RJCT → FAILED with its reason kept, ACSC or ACCC → SUCCEEDED, others
   * recorded only — then the group's: RJCT → every payout of the file FAILED, ACSC → every payout
   * without a status of its own in the report SUCCEEDED.
   */
  private async pain002(report: Pain002): Promise<void> {
    const file = await this.tx.query<{ id: bigint }>('SELECT id FROM sepa_files WHERE channel = $1 AND msg_id = $2', [
      this.connector.name,
      report.originalMsgId,
    ]);
    const fileId = file.rows[0]?.id;
    if (fileId === undefined) throw new SetAside(`OrgnlMsgId ${report.originalMsgId} is not a file of this channel`);
    if (report.groupStatus === 'RJCT' && report.groupReason === 'DU01') {
      // The bank refuses a repeat of a MsgId it has: the upload after a crash of a file that had
      // arrived. The file it has stands; this refusal is of the copy only.
      this.options.log.warn(
        { channel: this.connector.name, msgId: report.originalMsgId },
        'sepa bank refused a repeated upload of a file (DU01); the file it took stands',
      );
      return;
    }
    const members = await this.tx.query<Member>(
      `SELECT p.order_no, p.merchant_id, p.amount_minor, f.msg_id
         FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id WHERE p.file_id = $1`,
      [fileId],
    );
    const byOrder = new Map(members.rows.map((member) => [member.order_no, member]));
    const ownStatus = new Set<string>();
    for (const transaction of report.transactions) {
      const member = byOrder.get(transaction.originalEndToEndId);
      if (!member) {
        this.options.log.warn(
          { channel: this.connector.name, msgId: report.originalMsgId, endToEndId: transaction.originalEndToEndId },
          'sepa status of a transaction that is not in the file; ignored',
        );
        continue;
      }
      ownStatus.add(member.order_no);
      await this.bankSaid(member, transaction.status, transaction.reason);
      if (transaction.status === 'RJCT') await this.apply(member, 'FAILED', `pain002:${report.msgId}`);
      else if (transaction.status === 'ACSC' || transaction.status === 'ACCC') {
        await this.apply(member, 'SUCCEEDED', `pain002:${report.msgId}`);
      }
    }
    if (report.groupStatus === 'RJCT' || report.groupStatus === 'ACSC') {
      for (const member of members.rows) {
        if (report.groupStatus === 'ACSC' && ownStatus.has(member.order_no)) continue;
        await this.bankSaid(member, report.groupStatus, report.groupReason);
        await this.apply(member, report.groupStatus === 'RJCT' ? 'FAILED' : 'SUCCEEDED', `pain002:${report.msgId}`);
      }
    }
    if (report.groupStatus !== undefined) {
      await this.tx.query('UPDATE sepa_files SET group_status = $2 WHERE id = $1', [fileId, report.groupStatus]);
    }
    this.acknowledged.add(report.originalMsgId);
  }

  /**
   * Booked entries by EndToEndId: a DBIT → SUCCEEDED; a CRDT with bank transaction code
   * PMNT/ICDT/RRTN (a returned credit transfer) → REFUNDED with refundNo = AcctSvcrRef, when it
   * returns the full amount (another amount is logged for the operator and changes nothing).
   */
  private async camt054(notification: Camt054): Promise<void> {
    // The channel's payouts the file names, read at once (a day's notification may name thousands).
    const named = notification.entries.flatMap((entry) =>
      entry.status === 'BOOK'
        ? entry.transactions.flatMap((t) => (t.endToEndId === undefined ? [] : [t.endToEndId]))
        : [],
    );
    const found = await this.tx.query<Member>(
      `SELECT p.order_no, p.merchant_id, p.amount_minor, f.msg_id
         FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id
        WHERE p.order_no = ANY($1::text[]) AND f.channel = $2`,
      [[...new Set(named)], this.connector.name],
    );
    const members = new Map(found.rows.map((member) => [member.order_no, member]));
    for (const entry of notification.entries) {
      if (entry.status !== 'BOOK') continue;
      const code = entry.bankTransactionCode;
      const isReturn =
        entry.creditDebit === 'CRDT' && code?.domain === 'PMNT' && code.family === 'ICDT' && code.subFamily === 'RRTN';
      if (entry.creditDebit === 'CRDT' && !isReturn) continue;
      for (const transaction of entry.transactions) {
        if (transaction.endToEndId === undefined) continue;
        const member = members.get(transaction.endToEndId);
        if (!member) continue;
        if (!isReturn) {
          await this.bankSaid(member, 'BOOK', undefined);
          await this.apply(member, 'SUCCEEDED', `camt054:${notification.msgId}`);
          continue;
        }
        const amount = transaction.amount ?? (entry.transactions.length === 1 ? entry.amount : undefined);
        const minor = amount === undefined ? undefined : parseAmount(amount, 2);
        const reference = transaction.accountServicerRef;
        if (minor !== member.amount_minor || reference === undefined) {
          this.options.log.warn(
            {
              channel: this.connector.name,
              orderNo: member.order_no,
              amount,
              reference,
              reason: transaction.returnReason,
            },
            minor !== member.amount_minor
              ? 'sepa return of another amount than the payout: not a full return, nothing changed; see to it'
              : 'sepa return without AcctSvcrRef: nothing changed; see to it',
          );
          continue;
        }
        const refundNo = refundNoOf(reference);
        this.acknowledged.add(member.msg_id);
        await this.tx.query(
          `UPDATE sepa_file_payouts SET return_ref = COALESCE(return_ref, $2), bank_reason = $3, bank_status_at = $4
            WHERE order_no = $1`,
          [member.order_no, refundNo, transaction.returnReason ?? null, new Date(this.services.now())],
        );
        await this.apply(member, 'REFUNDED', `camt054:${notification.msgId}`, refundNo);
      }
    }
  }

  /**
   * Keeps the bank's status and reason of a payout (shown in the portal and to the operator); its
   * file counts as acknowledged from the bank's first word about any of its payouts. Gathered
   * here and written once per file by `flush`.
   */
  private bankSaid(member: Member, status: string, reason: string | undefined): Promise<void> {
    const before = this.said.get(member.order_no);
    this.said.set(member.order_no, { status, reason: reason ?? before?.reason ?? null });
    this.acknowledged.add(member.msg_id);
    return Promise.resolve();
  }

  /** Applies the gathered SUCCEEDED and FAILED moves through the payouts service, together. */
  private async settle(): Promise<void> {
    if (this.pending.size === 0) return;
    const moves = [...this.pending.values()];
    this.pending.clear();
    const outcomes = await this.services.payouts.applyChannelReports(
      this.tx,
      this.connector.name,
      moves.map(({ member, status }) => ({ orderNo: member.order_no, status, channelTradeNo: member.msg_id })),
    );
    for (const outcome of outcomes.values()) this.counts[outcome] = (this.counts[outcome] ?? 0) + 1;
  }

  /** Writes what the bank said of each payout, and that it said something of their files. */
  async flush(): Promise<void> {
    await this.settle();
    const now = new Date(this.services.now());
    if (this.said.size > 0) {
      const entries = [...this.said];
      await this.tx.query(
        `UPDATE sepa_file_payouts p SET bank_status = t.status, bank_reason = COALESCE(t.reason, p.bank_reason),
                bank_status_at = $4
           FROM unnest($1::text[], $2::text[], $3::text[]) AS t(order_no, status, reason)
          WHERE p.order_no = t.order_no`,
        [entries.map(([orderNo]) => orderNo), entries.map(([, s]) => s.status), entries.map(([, s]) => s.reason), now],
      );
    }
    if (this.acknowledged.size > 0) {
      // The bank answering on a file is proof that it has the file: one still 'built' was renamed
      // into place by an instance that died before recording it (or whose mark was lost). It is
      // marked uploaded here, so that it is not sent again once its lease runs out: the bank would
      // take the copy as a repeat at best (DU01 at worst), and an operator would see a file
      // waiting to be uploaded that the bank has long answered.
      const marked = await this.tx.query<{ msg_id: string; unrecorded: boolean }>(
        `UPDATE sepa_files f
            SET acknowledged_at = COALESCE(f.acknowledged_at, $2), state = 'uploaded',
                uploaded_at = COALESCE(f.uploaded_at, $2),
                lease_until = NULL, last_error = NULL
           FROM (SELECT id, state FROM sepa_files
                  WHERE msg_id = ANY($1::text[]) AND (acknowledged_at IS NULL OR state = 'built') FOR UPDATE) AS was
          WHERE f.id = was.id
          RETURNING f.msg_id, was.state = 'built' AS unrecorded`,
        [[...this.acknowledged], now],
      );
      for (const row of marked.rows) {
        if (!row.unrecorded) continue;
        this.options.log.info(
          { channel: this.connector.name, msgId: row.msg_id },
          'sepa file answered by the bank before its upload was recorded: marked uploaded, not sent again',
        );
      }
    }
  }

  private async apply(member: Member, status: ChannelStatus, eventId: string, refundNo?: string): Promise<void> {
    if (status === 'SUCCEEDED' || status === 'FAILED') {
      if (!this.pending.has(member.order_no)) this.pending.set(member.order_no, { member, status });
      return;
    }
    // A return settles the payout first (through applyUpdate): what was gathered goes before it.
    await this.settle();
    const result = await applyUpdate(
      this.services,
      this.connector.name,
      {
        kind: 'payout',
        reference: member.order_no,
        eventId,
        status,
        channelTradeNo: member.msg_id,
        refundNo,
      },
      { tx: this.tx, order: { merchantId: member.merchant_id, channel: this.connector.name } },
    );
    this.counts[result.outcome] = (this.counts[result.outcome] ?? 0) + 1;
  }
}

/**
 * A return's refundNo from the bank's AcctSvcrRef: kept as it is when it fits the platform's
 * channel references (letters, digits and `._:-`, at most 64), else a stable digest of it.
 */
export function refundNoOf(reference: string): string {
  if (/^[A-Za-z0-9._:-]{1,64}$/.test(reference)) return reference;
  return `RTRN-${createHash('sha256').update(reference).digest('hex').slice(0, 32)}`;
}
