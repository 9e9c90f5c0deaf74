import type { FastifyBaseLogger } from 'fastify';
import type { ChannelRegistry } from './registry.js';

/** The first retry of a channel that could not be prepared; doubling up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

/**
 * Prepares every configured channel that needs it at start (`Connector.prepare`: kind pix-api
 * registers its webhook at its provider). Every start and every instance does it again: it is
 * idempotent. A channel that cannot be reached does not stop the start (its orders are still
 * polled); it is tried again in the background, with a growing delay, until it answers. The
 * returned function stops the retries and closes the connectors' connections.
 */
export function startChannels(channels: ChannelRegistry, log: FastifyBaseLogger): () => Promise<void> {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const running = new Set<Promise<void>>();
  for (const connector of channels.list()) {
    const prepare = connector.prepare?.bind(connector);
    if (!prepare) continue;
    const attempt = (delayMs: number) => {
      const work = prepare().then(
        () => log.info({ channel: connector.name }, 'channel prepared'),
        (error: unknown) => {
          log.warn(
            { channel: connector.name, err: { message: (error as Error).message }, retryInMs: delayMs },
            'channel not prepared; retrying',
          );
          if (stopped) return;
          const timer = setTimeout(() => {
            timers.delete(timer);
            attempt(Math.min(delayMs * 2, MAX_RETRY_MS));
          }, delayMs);
          timer.unref();
          timers.add(timer);
        },
      );
      running.add(work);
      void work.finally(() => running.delete(work));
    };
    attempt(FIRST_RETRY_MS);
  }
  return async () => {
    stopped = true;
    for (const timer of timers) clearTimeout(timer);
    await Promise.allSettled([...running]);
    await Promise.allSettled(channels.list().map((connector) => connector.close?.()));
  };
}
