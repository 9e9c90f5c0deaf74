import type { ChannelServices } from '../apply.js';
import { bankTime, nextCutOff } from './execution-date.js';
import { exceptionsOf } from './files.js';
import { batchClose, type ClosedBy } from './outbox.js';
import type { SepaSftpConnector } from './sepa-sftp.js';

/** A sepa-sftp channel's state, as the operator reads it (`paygate channels health`). */
export interface SepaChannelHealth {
  readonly name: string;
  readonly kind: 'sepa-sftp';
  /** Whether it takes payments by bank transfer (`methods` EUR/SEPA). */
  readonly paymentsByTransfer: boolean;
  readonly instant: boolean;
  readonly batchEveryMs: number;
  readonly pollEveryMs: number;
  readonly timeZone: string;
  readonly cutOffs: readonly string[];
  /** The bank's next cut-off (a business day's), as an instant and on the bank's clock; null without cut-offs. */
  readonly nextCutOff: { readonly at: number; readonly bankTime: string } | null;
  /** The payouts confirmed and waiting for their file, and when and by what their batch closes. */
  readonly openBatch: {
    readonly payouts: number;
    readonly openedAt: number;
    readonly closesAt: number;
    readonly closedBy: ClosedBy;
  } | null;
  /** Files built and not yet confirmed uploaded, and the last upload error among them. */
  readonly filesToUpload: number;
  readonly lastUploadError: string | null;
  /** The age of the oldest file uploaded that the bank has said nothing of (0: none). */
  readonly oldestUnacknowledgedSeconds: number;
  /** When a file of the bank was last read. */
  readonly lastFileReadAt: number | null;
  readonly unmatchedCredits: number;
  readonly mismatchedBatches: number;
}

/** The health of one sepa-sftp channel at `services.now()`, from its records. */
export async function sepaChannelHealth(
  services: Pick<ChannelServices, 'db' | 'now' | 'payouts'>,
  connector: SepaSftpConnector,
): Promise<SepaChannelHealth> {
  const { settings } = connector;
  const now = services.now();
  const unbatched = await services.payouts.unbatched(connector.name);
  const files = await services.db.query<{
    to_upload: bigint;
    last_error: string | null;
    oldest: Date | null;
    last_read: Date | null;
  }>(
    `SELECT (SELECT count(*) FROM sepa_files WHERE channel = $1 AND state = 'built') AS to_upload,
            (SELECT last_error FROM sepa_files WHERE channel = $1 AND state = 'built' AND last_error IS NOT NULL
              ORDER BY id DESC LIMIT 1) AS last_error,
            (SELECT min(uploaded_at) FROM sepa_files WHERE channel = $1 AND state = 'uploaded' AND acknowledged_at IS NULL) AS oldest,
            (SELECT max(received_at) FROM sepa_inbox WHERE channel = $1) AS last_read`,
    [connector.name],
  );
  const row = files.rows[0];
  const cutOff = nextCutOff(now, settings);
  const exceptions = await exceptionsOf(services.db, connector.name);
  return {
    name: connector.name,
    kind: 'sepa-sftp',
    paymentsByTransfer: settings.methods.length > 0,
    instant: settings.instant,
    batchEveryMs: settings.batchEvery,
    pollEveryMs: settings.pollEvery,
    timeZone: settings.timeZone,
    cutOffs: settings.cutOffs,
    nextCutOff: cutOff === undefined ? null : { at: cutOff, bankTime: bankTime(cutOff, settings.timeZone) },
    openBatch:
      unbatched === undefined
        ? null
        : {
            payouts: unbatched.count,
            openedAt: unbatched.oldest.getTime(),
            ...batchClose(unbatched.oldest.getTime(), settings),
          },
    filesToUpload: Number(row?.to_upload ?? 0),
    lastUploadError: row?.last_error ?? null,
    oldestUnacknowledgedSeconds: row?.oldest ? Math.max(0, (now - row.oldest.getTime()) / 1000) : 0,
    lastFileReadAt: row?.last_read?.getTime() ?? null,
    ...exceptions,
  };
}
