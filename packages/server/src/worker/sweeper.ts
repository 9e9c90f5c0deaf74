import type { FastifyBaseLogger } from 'fastify';
import { isUnavailable } from '../db/db.js';
import type { Services } from '../services.js';

/**
 * One sweep: expire PENDING payments whose time is up, purge spent nonces and old sandbox
 * rejection records. Tests call it directly; `startSweeper` only schedules it.
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
  return { expired, noncesPurged };
}

/** How often the sweeper runs unless told otherwise. */
export const SWEEP_INTERVAL_MS = 5_000;

/** Runs `sweepOnce` every `intervalMs`; the returned function stops it. */
export function startSweeper(
  services: Services,
  log: FastifyBaseLogger,
  intervalMs = SWEEP_INTERVAL_MS,
): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOnce(services)
      .then((result) => {
        if (result.expired > 0) log.info(result, 'sweep');
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
