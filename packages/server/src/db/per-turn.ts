import DataLoader from 'dataloader';

/** At most this many calls go into one batch; the rest of a turn's calls go into further batches. */
export const PER_TURN_MAX_BATCH = 256;

/**
 * A loader that batches the calls of one turn of the event loop: every `load` made before the loop
 * next checks for I/O joins the same batch (`setImmediate` runs `batch` then), so N concurrent
 * requests cost one statement, one round trip and one commit instead of N. At most
 * PER_TURN_MAX_BATCH calls per batch, to bound a statement's size.
 *
 * No cache: every call reaches `batch`, so each caller sees the database as it is during its own
 * call, and a key asked for twice in one turn is in the batch twice. As with any DataLoader,
 * `batch` answers each key at its index, with a value or an Error for that caller alone; if it
 * throws, every caller of the batch gets the error.
 */
export function perTurnLoader<K, V>(batch: DataLoader.BatchLoadFn<K, V>): DataLoader<K, V> {
  return new DataLoader(batch, {
    cache: false,
    maxBatchSize: PER_TURN_MAX_BATCH,
    batchScheduleFn: (run) => setImmediate(run),
  });
}
