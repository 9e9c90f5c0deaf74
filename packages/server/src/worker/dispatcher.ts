import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Webhooks } from '../modules/webhooks/service.js';

/** A worker id that tells operators where an attempt ran. */
export const workerId = () => `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/**
 * Runs `concurrency` loops of `deliverNext`, each pausing `pollMs` when nothing is due. The step
 * does the work; this only schedules it. The returned function stops the loops and waits for
 * attempts in flight.
 */
export function startDispatcher(
  webhooks: Webhooks,
  log: FastifyBaseLogger,
  options: { concurrency?: number; pollMs?: number; worker?: string } = {},
): () => Promise<void> {
  const worker = options.worker ?? workerId();
  const pollMs = options.pollMs ?? 200;
  let stopping = false;
  let wake: (() => void) | undefined;
  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = async () => {
    while (!stopping) {
      try {
        const outcome = await webhooks.deliverNext(worker);
        if (outcome === 'idle') await pause();
      } catch (error) {
        log.error({ err: error }, 'webhook delivery step failed');
        await pause();
      }
    }
  };
  const loops = Array.from({ length: options.concurrency ?? 4 }, loop);
  return async () => {
    stopping = true;
    wake?.();
    await Promise.all(loops);
  };
}
