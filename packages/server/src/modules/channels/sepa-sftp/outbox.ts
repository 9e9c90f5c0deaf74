import { oneLine, validateXml, writePain001 } from '@paygate/iso20022';
import { ulid } from '../../../ids.js';
import type { Metrics } from '../../../observability/metrics.js';
import type { ChannelServices } from '../apply.js';
import { nextCutOff, requestedExecutionDate } from './execution-date.js';
import type { SepaSftpConnector } from './sepa-sftp.js';
import { SftpError } from './sftp.js';

/** Where the file steps write what they did (the platform's logger fits). */
export interface FileLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

/** What the file steps need besides the services. */
export interface FileStepOptions {
  readonly log: FileLog;
  readonly metrics?: Pick<Metrics, 'sepaFile' | 'sepaStatus' | 'sepaBatchBooking' | 'sepaCredit'> | undefined;
}

/**
 * What closes an open batch: `batchEvery` after its first confirmation, the bank's next cut-off
 * if that comes first, or for SEPA Instant its first confirmation itself.
 */
export type ClosedBy = 'batchEvery' | 'cutOff' | 'instant';

/** What closing a batch came to. */
export type BatchResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'waiting'; readonly closesAt: number; readonly closedBy: ClosedBy }
  | { readonly kind: 'built'; readonly msgId: string; readonly transactions: number; readonly closedBy: ClosedBy }
  | { readonly kind: 'invalid'; readonly reasons: readonly string[] };

/**
 * When the batch opened at `opened` (its first confirmation, Unix ms) closes, and by what. SEPA
 * Instant: at once, so the next step (every 250 ms) sends the payout, with those confirmed in the
 * meantime (within the same second), and it leaves well within 2 s. Otherwise `batchEvery` after
 * it, or at the bank's first cut-off at or after it when that is sooner (a bank processes what it
 * has by then).
 */
export function batchClose(
  opened: number,
  settings: Pick<SepaSftpConnector['settings'], 'batchEvery' | 'instant' | 'cutOffs' | 'timeZone'>,
): { readonly closesAt: number; readonly closedBy: ClosedBy } {
  if (settings.instant) return { closesAt: opened, closedBy: 'instant' };
  const every = opened + settings.batchEvery;
  const cutOff = nextCutOff(opened, settings);
  return cutOff !== undefined && cutOff < every
    ? { closesAt: cutOff, closedBy: 'cutOff' }
    : { closesAt: every, closedBy: 'batchEvery' };
}

/** A batch whose file failed its checks: the transaction is rolled back, nothing is stored. */
class InvalidFile extends Error {
  constructor(readonly reasons: readonly string[]) {
    super(reasons.join('; '));
  }
}

/**
 * A file's `GrpHdr/MsgId`: `PG` and a ULID, 28 characters of the EPC Latin set. The ULID's 80
 * random bits make it new across restarts, instances and databases (decisions.md: never used
 * before), where a sequence would start again with a new database.
 */
export const newMsgId = (now: number): string => `PG${ulid(now)}`;

/**
 * Closes the channel's batch when it is due (one step; `startSepaChannels` schedules it). The
 * first confirmed payout not yet in a file opens the batch; it closes (`batchClose`) `batchEvery`
 * later, at the bank's next cut-off when that is sooner, or for SEPA Instant at once (the next
 * step), with every payout confirmed by then. In ONE transaction: the payouts are assigned to the new MsgId
 * (their row locks decide between instances: a payout is never in two batches), the pain.001 is
 * written and validated against the EPC XSD, and its exact bytes are stored with the payouts it
 * holds. A file that fails its checks rolls all of it back: nothing is stored or uploaded, the
 * payouts stay PROCESSING and unbatched, the log says why and `paygate_sepa_files_invalid_total`
 * counts it (an alert rule watches it).
 */
export async function batchOnce(
  services: ChannelServices,
  connector: SepaSftpConnector,
  options: FileStepOptions,
): Promise<BatchResult> {
  const { settings } = connector;
  const oldest = await services.payouts.oldestUnbatched(connector.name);
  if (!oldest) return { kind: 'none' };
  const { closesAt, closedBy } = batchClose(oldest.getTime(), settings);
  if (services.now() < closesAt) return { kind: 'waiting', closesAt, closedBy };
  const msgId = newMsgId(services.now());
  try {
    return await services.db.transaction(async (tx): Promise<BatchResult> => {
      const payouts = await services.payouts.assignBatch(tx, connector.name, new Date(closesAt), msgId);
      if (payouts.length === 0) return { kind: 'none' }; // another instance closed it first
      const createdAt = new Date(services.now());
      let xml: string;
      try {
        xml = writePain001({
          msgId,
          createdAt,
          // A batch a cut-off closed holds what was confirmed before it: it is that cut-off's file,
          // for that cut-off's day, though built a moment after it.
          requestedExecutionDate: requestedExecutionDate(
            closedBy === 'cutOff' ? new Date(closesAt - 1) : createdAt,
            settings,
            settings.instant,
          ),
          paymentInformationId: msgId,
          instant: settings.instant,
          debtor: settings.debtor,
          transactions: payouts.map((payout) => ({
            endToEndId: payout.orderNo,
            amount: payout.amount,
            creditor: { name: payout.payee.name, iban: payout.payee.accountNumber, bic: payout.payee.bankCode },
          })),
        });
      } catch (error) {
        throw new InvalidFile([oneLine(error)]);
      }
      const check = await validateXml(xml, 'pain.001.001.09');
      if (!check.valid) throw new InvalidFile(check.errors.slice(0, 10));
      const bytes = Buffer.from(xml, 'utf8');
      const controlSum = payouts.reduce((sum, payout) => sum + payout.amountMinor, 0n);
      const stored = await tx.query<{ id: bigint }>(
        `INSERT INTO sepa_files (channel, msg_id, pmt_inf_id, name, bytes, transactions, ctrl_sum_minor, created_at, instant)
         VALUES ($1, $2, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [connector.name, msgId, `${msgId}.xml`, bytes, payouts.length, controlSum, createdAt, settings.instant],
      );
      const fileId = stored.rows[0]?.id as bigint;
      // The primary key on order_no refuses a payout in a second file, whatever happened before.
      await tx.query(
        `INSERT INTO sepa_file_payouts (order_no, file_id, merchant_id, amount_minor)
         SELECT order_no, $1, merchant_id, amount_minor
           FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS t(order_no, merchant_id, amount_minor)`,
        [
          fileId,
          payouts.map((p) => p.orderNo),
          payouts.map((p) => p.merchantId.toString()),
          payouts.map((p) => p.amountMinor.toString()),
        ],
      );
      return { kind: 'built', msgId, transactions: payouts.length, closedBy };
    });
  } catch (error) {
    if (!(error instanceof InvalidFile)) throw error;
    options.metrics?.sepaFile(connector.name, 'invalid');
    options.log.error(
      { channel: connector.name, msgId, reasons: error.reasons },
      'sepa batch not built: its pain.001 failed its checks; nothing uploaded, the payouts stay PROCESSING',
    );
    return { kind: 'invalid', reasons: error.reasons };
  }
}

/** A file stored and not yet confirmed uploaded, claimed for one upload attempt. */
interface ClaimedFile {
  id: bigint;
  msg_id: string;
  name: string;
  bytes: Uint8Array;
  attempts: number;
}

/** What one upload step did. */
export interface UploadResult {
  readonly uploaded: readonly string[];
  readonly failed: readonly { readonly msgId: string; readonly error: string }[];
}

/** The longest wait before a failed upload is tried again. */
const MAX_UPLOAD_BACKOFF_MS = 60_000;

/**
 * Uploads every stored file of the channel not yet confirmed uploaded (one step). Each file is
 * claimed first with a lease (`lease_until`, committed before any SFTP call, SKIP LOCKED): two
 * instances never upload one file at once. The upload writes `<MsgId>.xml.part`, then renames it
 * to `<MsgId>.xml`, so the bank never reads half a file; the file is marked uploaded only once
 * the rename succeeded. After a crash a file not marked uploaded is uploaded again with the same
 * bytes: when `<MsgId>.xml` is already there with the same size, or the rename is refused
 * because it is, the file arrived before and is marked so. A failure (the server down, a
 * timeout) leaves the file for a later step, with a growing delay.
 */
export async function uploadOnce(
  services: ChannelServices,
  connector: SepaSftpConnector,
  options: FileStepOptions,
): Promise<UploadResult> {
  const uploaded: string[] = [];
  const failed: { msgId: string; error: string }[] = [];
  // Long enough for an upload (connect, a few operations, each under timeoutMs), short enough that
  // a file claimed by an instance that died is taken up again soon after (60 s by default).
  const leaseMs = Math.max(10_000, connector.settings.timeoutMs * 6);
  for (;;) {
    const now = services.now();
    const claimed = await services.db.query<ClaimedFile>(
      `UPDATE sepa_files SET lease_until = $3, attempts = attempts + 1
        WHERE id = (SELECT id FROM sepa_files
                     WHERE channel = $1 AND state = 'built' AND (lease_until IS NULL OR lease_until < $2)
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id, msg_id, name, bytes, attempts`,
      [connector.name, new Date(now), new Date(now + leaseMs)],
    );
    const file = claimed.rows[0];
    if (!file) break;
    try {
      const how = await putFile(connector, file.name, Buffer.from(file.bytes));
      await services.db.query(
        `UPDATE sepa_files SET state = 'uploaded', uploaded_at = $2, lease_until = NULL, last_error = NULL
          WHERE id = $1 AND state = 'built'`,
        [file.id, new Date(services.now())],
      );
      options.metrics?.sepaFile(connector.name, 'uploaded');
      options.log.info(
        { channel: connector.name, msgId: file.msg_id, bytes: file.bytes.length, how },
        'sepa file uploaded',
      );
      uploaded.push(file.msg_id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const retryInMs = Math.min(MAX_UPLOAD_BACKOFF_MS, 1_000 * 2 ** Math.min(file.attempts - 1, 16));
      await services.db.query(
        `UPDATE sepa_files SET last_error = $2, lease_until = $3 WHERE id = $1 AND state = 'built'`,
        [file.id, message.slice(0, 1_000), new Date(services.now() + retryInMs)],
      );
      options.log.warn(
        { channel: connector.name, msgId: file.msg_id, attempts: file.attempts, retryInMs, err: { message } },
        'sepa file not uploaded; retrying',
      );
      failed.push({ msgId: file.msg_id, error: message });
      // The server is not taking files now: the others wait for the next step.
      break;
    }
  }
  return { uploaded, failed };
}

/**
 * Puts one file into the upload directory: under a temporary name not ending in `.xml`, then
 * renamed. Says how it got there: `uploaded`, or `present` when a previous attempt had already
 * put it there (the same name and size; the name is a MsgId, never used for other bytes).
 */
async function putFile(connector: SepaSftpConnector, name: string, bytes: Buffer): Promise<'uploaded' | 'present'> {
  const target = `${connector.settings.uploadDir}/${name}`;
  const part = `${target}.part`;
  return connector.sftp.use(async (ops) => {
    const existing = await ops.size(target);
    if (existing === bytes.length) return 'present';
    if (existing !== undefined) {
      throw new SftpError(
        `${target} exists with ${existing} bytes, not the ${bytes.length} stored: left for the operator`,
      );
    }
    await ops.write(part, bytes);
    try {
      await ops.rename(part, target);
    } catch (error) {
      // OpenSSH refuses a rename onto a name that exists: the file arrived (a parallel attempt).
      if ((await ops.size(target)) === bytes.length) return 'present';
      throw error;
    }
    return 'uploaded';
  });
}
