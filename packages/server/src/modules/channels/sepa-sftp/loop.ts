import { isUnavailable } from '../../../db/db.js';
import type { ChannelServices } from '../apply.js';
import { readInboxOnce } from './inbox.js';
import { batchOnce, type FileLog, type FileStepOptions, uploadOnce } from './outbox.js';
import { isSepaSftp, type SepaSftpConnector } from './sepa-sftp.js';

/** A step that failed: the database gone is a warning (it comes back), anything else an error. */
function failed(log: FileLog, channel: string, what: string, error: unknown) {
  if (isUnavailable(error)) {
    log.warn(
      { channel, err: { message: (error as Error).message } },
      `sepa ${what} failed: the database is unavailable`,
    );
  } else {
    log.warn(
      { channel, err: { message: (error as Error).message } },
      `sepa ${what} failed; tried again at the next step`,
    );
  }
}

/** Runs `step` every `intervalMs`, never two at once; the returned function stops it and waits. */
function every(intervalMs: number, step: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = step().finally(() => {
      busy = false;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * The file steps of one sepa-sftp channel: closing due batches and uploading stored files (every
 * quarter of `batchEvery`, at most every 5 s, so a batch closes within that of its time or its
 * cut-off; every 250 ms for SEPA Instant), and
 * reading the bank's files every `pollEvery`. A batch whose file failed its checks is tried again
 * `batchEvery` later, not at every step.
 */
function startChannel(
  services: ChannelServices,
  connector: SepaSftpConnector,
  options: FileStepOptions,
): () => Promise<void> {
  const { name, settings } = connector;
  let retryInvalidAt = 0;
  // SEPA Instant: a confirmed payout leaves within 2 s (its second closes it, the next step sends it).
  const outboundMs = settings.instant ? 250 : Math.max(250, Math.min(5_000, settings.batchEvery / 4));
  const outbound = every(outboundMs, async () => {
    try {
      if (services.now() >= retryInvalidAt) {
        const batch = await batchOnce(services, connector, options);
        if (batch.kind === 'invalid') retryInvalidAt = services.now() + settings.batchEvery;
        if (batch.kind === 'built') {
          options.log.info({ channel: name, msgId: batch.msgId, transactions: batch.transactions }, 'sepa batch built');
        }
      }
      await uploadOnce(services, connector, options);
    } catch (error) {
      failed(options.log, name, 'batch or upload', error);
    }
  });
  const inbound = every(settings.pollEvery, async () => {
    try {
      await readInboxOnce(services, connector, options);
    } catch (error) {
      failed(options.log, name, 'inbox', error);
    }
  });
  return () => Promise.all([outbound(), inbound()]).then(() => undefined);
}

/**
 * Starts the file steps of every sepa-sftp channel (in the server and in `npx paygate worker`,
 * like polling). Any number of instances may run them on one database: a payout is assigned to
 * a batch under its row lock, a file's upload is leased, a bank file is recorded once by its
 * unique (channel, name). The returned function stops them.
 */
export function startSepaChannels(services: ChannelServices, options: FileStepOptions): () => Promise<void> {
  const connectors = services.channels.list().filter(isSepaSftp);
  const stops = connectors.map((connector) => startChannel(services, connector, options));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
    await Promise.all(connectors.map((connector) => connector.sftp.close()));
  };
}
