import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { isUnavailable } from '../db/db.js';
import type { Webhooks } from '../modules/webhooks/service.js';

/** A worker id that tells operators where an attempt ran. */
export const workerId = () => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/**
 * Keeps up to `concurrency` deliveries in flight: whenever slots are free it claims that many due
 * events in one statement and starts them; a slow receiver holds one slot, not a batch. When
 * nothing is due it waits `pollMs`. The steps (`claim`, `deliver`) do the work; this only
 * schedules them. The returned function stops claiming and waits for attempts in flight.
 */
export function startDispatcher(
  webhooks: Webhooks,
  log: FastifyBaseLogger,
  options: { concurrency?: number; pollMs?: number; worker?: string } = {},
): () => Promise<void> {
  const worker = options.worker ?? workerId();
  const concurrency = options.concurrency ?? 32;
  const pollMs = options.pollMs ?? 200;
  const inFlight = new Set<Promise<unknown>>();
  let stopping = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const pump = async () => {
    while (!stopping) {
      const free = concurrency - inFlight.size;
      if (free === 0) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed: Awaited<ReturnType<Webhooks['claim']>> = [];
      try {
        claimed = await webhooks.claim(worker, free);
      } catch (error) {
        // The database being away is an outage to report, not a fault of ours; the loop retries.
        if (isUnavailable(error)) log.warn({ err: { message: (error as Error).message } }, 'webhook claim failed');
        else log.error({ err: error }, 'webhook claim failed');
      }
      if (claimed.length === 0) {
        // Nothing due (or the database is unreachable): look again shortly, or when a slot frees.
        await Promise.race([sleep(pollMs), ...inFlight]);
        continue;
      }
      for (const event of claimed) {
        const attempt = webhooks
          .deliver(event, worker)
          .catch((error: unknown) =>
            isUnavailable(error)
              ? log.warn(
                  { err: { message: (error as Error).message }, eventId: event.event_id },
                  'webhook delivery failed',
                )
              : log.error({ err: error, eventId: event.event_id }, 'webhook delivery failed'),
          )
          .finally(() => inFlight.delete(attempt));
        inFlight.add(attempt);
      }
    }
  };
  const running = pump();
  return async () => {
    stopping = true;
    wake?.();
    await running;
    await Promise.all(inFlight);
  };
}
