import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { isUnavailable } from '../db/db.js';
import type { ClaimedEvent } from '../modules/webhooks/delivery.js';
import type { Webhooks } from '../modules/webhooks/service.js';

/** A worker id that tells operators where an attempt ran. */
export const workerId = () => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/**
 * Events one dispatcher holds leased at most, in multiples of its concurrency: those being sent,
 * those claimed and waiting for a free slot, those whose attempts are being recorded. Enough to
 * keep every slot busy while a claim is on its way (a claim takes as long as the database is
 * slow), and bounded; an event that waited so long that its lease could run out during its
 * attempt is given back instead of sent (Webhooks.deliver).
 */
const LEASE_WINDOW = 8;
/** Claimed events waiting for a slot, in multiples of the concurrency, below which one claims more. */
const READY_LOW = 2;

/**
 * Keeps up to `concurrency` webhook requests in flight. Claims run ahead of the sends and records
 * are written behind them, so that neither database round trip holds a request slot:
 * - one claim statement at a time takes as many due events as the lease window has room for
 *   (at least a round of sends once busy, so one statement serves many deliveries);
 * - a free slot takes the next claimed event at once;
 * - attempts finishing together are recorded together (Webhooks' settle batches).
 * When nothing is due it looks again after `pollMs`, or as soon as a slot frees. The steps (`claim`,
 * `deliver`, `release`) do the work; this only schedules them. The returned function stops
 * claiming, gives back the claimed events not yet sent and waits for the attempts in flight.
 */
export function startDispatcher(
  webhooks: Webhooks,
  log: FastifyBaseLogger,
  options: { concurrency?: number; pollMs?: number; worker?: string } = {},
): () => Promise<void> {
  const worker = options.worker ?? workerId();
  const concurrency = options.concurrency ?? 32;
  const pollMs = options.pollMs ?? 200;
  const window = concurrency * LEASE_WINDOW;
  /** Claimed, not started. */
  const ready: ClaimedEvent[] = [];
  /** Started and not yet recorded. */
  const running = new Set<Promise<unknown>>();
  let sending = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  /** Resolves after `ms`, or earlier when a slot or lease frees up (or on stop). */
  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        wake = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  const nudge = () => wake?.();

  const failed = (event: ClaimedEvent) => (error: unknown) =>
    isUnavailable(error)
      ? log.warn({ err: { message: (error as Error).message }, eventId: event.event_id }, 'webhook delivery failed')
      : log.error({ err: error, eventId: event.event_id }, 'webhook delivery failed');

  /** Starts claimed events while slots are free. */
  const fill = () => {
    while (!stopping && sending < concurrency && ready.length > 0) {
      const event = ready.shift() as ClaimedEvent;
      sending++;
      let sent = false;
      const onSent = () => {
        if (sent) return;
        sent = true;
        sending--;
        fill();
        nudge();
      };
      const attempt = webhooks
        .deliver(event, worker, onSent)
        .catch(failed(event))
        .finally(() => {
          onSent();
          running.delete(attempt);
          nudge();
        });
      running.add(attempt);
    }
  };

  const pump = async () => {
    while (!stopping) {
      const room = window - running.size - ready.length;
      // Claim once the waiting events run low, and there is room for at least a round of sends
      // (or nothing is leased at all).
      if (ready.length >= concurrency * READY_LOW || (room < concurrency && running.size + ready.length > 0)) {
        await nap(pollMs);
        continue;
      }
      let claimed: ClaimedEvent[] = [];
      try {
        claimed = await webhooks.claim(worker, room);
      } catch (error) {
        // The database being away is an outage to report, not a fault of ours; the loop retries.
        if (isUnavailable(error)) log.warn({ err: { message: (error as Error).message } }, 'webhook claim failed');
        else log.error({ err: error }, 'webhook claim failed');
      }
      if (stopping) {
        ready.push(...claimed);
        break;
      }
      ready.push(...claimed);
      fill();
      // Nothing due (or the database is unreachable): look again shortly, or when a slot frees.
      if (claimed.length === 0) await nap(pollMs);
    }
  };
  const pumping = pump();
  return async () => {
    stopping = true;
    nudge();
    await pumping;
    const unsent = ready.splice(0);
    await webhooks.release(worker, unsent).catch((error: unknown) => {
      // Not given back: their leases run out and another worker takes them then.
      log.warn({ err: { message: (error as Error).message } }, 'webhook release failed');
    });
    await Promise.all(running);
  };
}
