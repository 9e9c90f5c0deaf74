import type { FastifyBaseLogger } from 'fastify';
import { isUnavailable } from '../db/db.js';
import type { Vacuumed } from '../db/vacuum.js';
import { purgeReceivedFiles, vacuumReceivedFiles } from '../modules/channels/bank-files.js';
import { purgeExchanges, vacuumExchanges } from '../modules/channels/exchanges.js';
import { vacuumNotifications } from '../modules/channels/notifications.js';
import type { Services } from '../services.js';

/**
 * One sweep: expire PENDING payments whose time is up, purge spent nonces, old sandbox
 * rejection records, old sign-in attempts, dead portal and back-office sessions and channel
 * exchanges and received bank files' bytes past their keeping. Tests call it
 * directly; `startSweeper` only schedules it.
 */
export async function sweepOnce(services: Services): Promise<{ expired: number; noncesPurged: number }> {
  let expired = 0;
  for (;;) {
    const batch = await services.payments.expireDue(100);
    expired += batch;
    if (batch < 100) break;
  }
  const noncesPurged = await services.nonces.purge();
  await services.rejectedRequests.purge();
  await services.portal.purge();
  await services.operators.purge();
  await purgeExchanges(services.db, services.now());
  await purgeReceivedFiles(services.db, services.now());
  return { expired, noncesPurged };
}

/**
 * The embedded database only (PostgreSQL runs autovacuum): vacuums the tables that purges and
 * status changes churn, each when it has dead rows, and returns what was done. Each statement
 * holds PGlite's one session, so requests wait meanwhile; the passes are kept small by running
 * often (see vacuumTable).
 */
export async function vacuumOnce(services: Services): Promise<Vacuumed[]> {
  if (services.db.kind !== 'pglite') return [];
  const done: Vacuumed[] = [];
  for (const vacuum of [
    () => services.nonces.vacuum(),
    () => services.payments.vacuum(),
    () => services.payouts.vacuum(),
    () => services.webhooks.vacuum(),
    () => services.rejectedRequests.vacuum(),
    () => services.portal.vacuum(),
    () => vacuumNotifications(services.db),
    () => vacuumExchanges(services.db),
    () => vacuumReceivedFiles(services.db),
  ]) {
    done.push(...(await vacuum()));
  }
  return done;
}

/** How often the sweeper runs unless told otherwise. */
export const SWEEP_INTERVAL_MS = 5_000;

/** How often the embedded database is vacuumed (PostgreSQL's autovacuum_naptime). */
export const VACUUM_INTERVAL_MS = 60_000;

/**
 * Runs `sweepOnce` every `intervalMs`, and on the embedded database `vacuumOnce` after the first
 * sweep and then every `vacuumIntervalMs`; the returned function stops it.
 */
export function startSweeper(
  services: Services,
  log: FastifyBaseLogger,
  intervalMs = SWEEP_INTERVAL_MS,
  vacuumIntervalMs = VACUUM_INTERVAL_MS,
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  // The first pass comes with the first sweep: a backlog that sweep purged is vacuumed at once.
  let lastVacuum = -Infinity;
  const timer = setInterval(() => {
    running = sweepOnce(services)
      .then(async (result) => {
        if (result.expired > 0) log.info(result, 'sweep');
        if (services.db.kind !== 'pglite' || Date.now() - lastVacuum < vacuumIntervalMs) return;
        lastVacuum = Date.now();
        // A pass long enough for requests to notice the wait is worth an operator's eye.
        for (const vacuumed of await vacuumOnce(services)) {
          if (vacuumed.ms >= 100) log.info(vacuumed, 'vacuum');
          else log.debug(vacuumed, 'vacuum');
        }
      })
      .catch((error: unknown) =>
        isUnavailable(error)
          ? log.warn({ err: { message: (error as Error).message } }, 'sweep failed: the database is unavailable')
          : log.error({ err: error }, 'sweep failed'),
      );
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
