import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { creditorReference, isBic, normalizeCreditorReference, normalizeIban, toEpcLatin } from '@paygate/iso20022';
import type { ChannelSettings } from '../../../channel-settings.js';
import type { Db } from '../../../db/db.js';
import type { FieldError } from '../../../errors.js';
import {
  ChannelUnavailable,
  type ChannelOrderRef,
  type ChannelPayoutOrder,
  type ChannelState,
  type Connector,
  type ConnectorContext,
  type PayeeCheck,
} from '../connector.js';
import { statusesOf } from './files.js';
import { SftpSession } from './sftp.js';

export type SepaSftpSettings = Extract<ChannelSettings, { kind: 'sepa-sftp' }>;

/** An unused SFTP connection is closed after this long. */
const IDLE_MS = 30_000;

/** The longest payee name (decisions.md: 1–70 characters). */
const NAME_MAX = 70;

/**
 * The payee rules of a EUR payout routed to a sepa-sftp channel (decisions.md, fixed):
 * `accountNumber` an IBAN (ISO 13616: the country's length and the mod-97 check; spaces dropped,
 * letters upper-cased, and kept so), `bankCode` absent or a BIC (ISO 9362, 8 or 11 characters),
 * `name` 1–70 characters with at least one letter or digit the EPC character set can carry.
 */
export function sepaPayee(payee: ChannelPayoutOrder['payee']): PayeeCheck {
  const errors: FieldError[] = [];
  const iban = normalizeIban(payee.accountNumber);
  if (iban === undefined) {
    errors.push({ field: 'payee.accountNumber', message: 'must be an IBAN (the country length and the mod-97 check)' });
  }
  let bic: string | undefined;
  if (payee.bankCode !== undefined) {
    bic = payee.bankCode.replace(/\s+/g, '').toUpperCase();
    if (!isBic(bic)) errors.push({ field: 'payee.bankCode', message: 'must be absent or a BIC (8 or 11 characters)' });
  }
  const name = payee.name.trim();
  if (name.length < 1 || [...name].length > NAME_MAX) {
    errors.push({ field: 'payee.name', message: `must be 1 to ${NAME_MAX} characters` });
  } else if (toEpcLatin(name) === '') {
    errors.push({ field: 'payee.name', message: 'must have letters or digits of the Latin alphabet' });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, payee: { accountNumber: iban, ...(bic !== undefined ? { bankCode: bic } : {}) } };
}

/**
 * The creditor reference of a payment by bank transfer (decisions.md, "Payments by bank
 * transfer"): ISO 11649, `RF`, the mod-97 check digits and the 18 digits of its order number
 * (`P…`), so unique per payment, and the payment it names is known from it alone (whatever
 * became of the payment since), 22 characters where 25 are allowed.
 */
export function transferReference(orderNo: string): string {
  if (!/^P[0-9]{18}$/.test(orderNo)) throw new RangeError(`${orderNo} is not a payment order number`);
  return creditorReference(orderNo.slice(1));
}

/** The payment order number a creditor reference this platform issued names; undefined for any other reference. */
export function transferOrderOf(reference: string): string | undefined {
  const normalized = normalizeCreditorReference(reference);
  const body = normalized?.slice(4);
  return body !== undefined && /^[0-9]{18}$/.test(body) ? `P${body}` : undefined;
}

/** What the bank's files said of one payout, as kept in `sepa_file_payouts`. */
export interface BankWord {
  readonly fileId: bigint;
  readonly msgId: string;
  readonly instant: boolean;
  /** The platform's status the bank's word maps to; undefined while the bank said nothing final. */
  readonly status: 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'REFUNDED';
  readonly bankStatus: string | null;
  readonly bankReason: string | null;
  readonly returnRef: string | null;
}

/** The file a payout was sent in and what the bank's files said of it; undefined when it is in no file. */
export async function bankWordOf(db: Pick<Db, 'query'>, orderNo: string): Promise<BankWord | undefined> {
  const result = await db.query<{
    file_id: bigint;
    msg_id: string;
    instant: boolean;
    bank_status: string | null;
    bank_reason: string | null;
    return_ref: string | null;
  }>(
    `SELECT f.id AS file_id, f.msg_id, f.instant, p.bank_status, p.bank_reason, p.return_ref
       FROM sepa_file_payouts p JOIN sepa_files f ON f.id = p.file_id WHERE p.order_no = $1`,
    [orderNo],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const status =
    row.return_ref !== null
      ? 'REFUNDED'
      : row.bank_status === 'RJCT'
        ? 'FAILED'
        : row.bank_status === 'ACSC' || row.bank_status === 'ACCC' || row.bank_status === 'BOOK'
          ? 'SUCCEEDED'
          : 'PROCESSING';
  return {
    fileId: BigInt(row.file_id),
    msgId: row.msg_id,
    instant: row.instant,
    status,
    bankStatus: row.bank_status,
    bankReason: row.bank_reason,
    returnRef: row.return_ref,
  };
}

/** A sepa-sftp channel: the connector, its settings and its SFTP session, for the file steps. */
export interface SepaSftpConnector extends Connector {
  readonly kind: 'sepa-sftp';
  readonly settings: SepaSftpSettings;
  readonly sftp: SftpSession;
}

export const isSepaSftp = (connector: Connector): connector is SepaSftpConnector => connector.kind === 'sepa-sftp';

/**
 * The connector of kind `sepa-sftp` (decisions.md, "SEPA payouts: ISO 20022 files with a bank"):
 * EUR payouts as SEPA Credit Transfers (or SEPA Instant ones), gathered into pain.001 files
 * uploaded to the bank over SFTP, its pain.002, camt.054 and camt.053 read back; and EUR payments
 * by bank transfer to the channel's account, each with a creditor reference of its own, settled by
 * the credits those files book. Nothing is sent when a payout is confirmed: the file steps
 * (`outbox.ts`, `inbox.ts`) close batches, upload them and read the bank's files, and a query
 * answers from what those files said.
 */
export function sepaSftpConnector(settings: SepaSftpSettings, context: ConnectorContext): SepaSftpConnector {
  const { db: given } = context;
  /** The records of the files (a command without the database, such as reconcile, never asks). */
  const db = () => {
    if (!given) throw new Error(`channel ${settings.name}: kind sepa-sftp keeps its files in the database`);
    return given;
  };
  const sftp = new SftpSession({
    host: settings.host,
    port: settings.port,
    username: settings.username,
    privateKey: readFileSync(resolve(settings.privateKeyFile)),
    hostKey: settings.hostKey,
    timeoutMs: settings.timeoutMs,
    idleMs: IDLE_MS,
  });
  const query = async (order: ChannelOrderRef): Promise<ChannelState | undefined> => {
    const word = await bankWordOf(db(), order.orderNo);
    if (!word) return undefined;
    if (word.status === 'REFUNDED') {
      return { status: 'REFUNDED', refundNo: word.returnRef ?? undefined, channelTradeNo: word.msgId };
    }
    return { status: word.status, channelTradeNo: word.msgId };
  };
  return {
    kind: 'sepa-sftp',
    name: settings.name,
    methods: settings.methods,
    payouts: settings.payouts,
    settings,
    sftp,
    validatePayee: sepaPayee,
    // Payments by bank transfer: nothing to register at the bank. The payer is told the account
    // and the payment's own reference; the bank's statements and notifications settle it.
    createPayment(order) {
      if (order.currency !== 'EUR' || order.method !== 'SEPA') {
        return Promise.reject(new ChannelUnavailable(settings.name, `a sepa-sftp channel takes EUR/SEPA only`));
      }
      const reference = transferReference(order.orderNo);
      return Promise.resolve({
        channelTradeNo: reference,
        payerAction: {
          kind: 'bank',
          url: `${context.publicUrl}/cashier/${order.orderNo}`,
          bankDetails: {
            iban: settings.debtor.iban,
            ...(settings.debtor.bic !== undefined ? { bic: settings.debtor.bic } : {}),
            beneficiary: settings.debtor.name,
            reference,
          },
        },
      });
    },
    // A credit comes by file, in the file's own transaction; there is nothing to ask the bank.
    queryPayment: () => Promise.resolve(undefined),
    // Payouts go by file: a confirmed payout waits for its batch, nothing is sent now.
    createPayout: () => Promise.resolve({ channelTradeNo: undefined }),
    // Withdrawn while it is in no file; once in a file, the bank has it (or will).
    releasePayout: async (order) => (await bankWordOf(db(), order.orderNo)) === undefined,
    queryPayout: query,
    payoutFile: async (orderNo) => {
      const word = await bankWordOf(db(), orderNo);
      if (word === undefined) return undefined;
      const statuses = (await statusesOf(db(), [word.fileId], orderNo)).get(word.fileId) ?? [];
      return {
        msgId: word.msgId,
        instant: word.instant,
        bankStatus: word.bankStatus,
        reasonCode: word.bankReason,
        returnReference: word.returnRef,
        statuses,
      };
    },
    verifyNotification: () => ({
      ok: false,
      code: 'UNAUTHORIZED',
      reason: 'a sepa-sftp channel reports by files, not notifications',
    }),
    close: () => sftp.close(),
  };
}
