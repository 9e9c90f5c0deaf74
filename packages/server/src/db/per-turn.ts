import DataLoader from 'dataloader';

/** At most this many calls go into one batch; the rest of a turn's calls go into further batches. */
export const PER_TURN_MAX_BATCH = 256;

/**
 * A loader that batches the calls of two turns of the event loop: every `load` made before the
 * loop has twice more checked for I/O joins the same batch (`setImmediate` twice runs `batch`
 * then), so N concurrent requests cost one statement, one round trip and one commit instead of N.
 * At most PER_TURN_MAX_BATCH calls per batch, to bound a statement's size.
 *
 * Two turns rather than one: under load the requests whose bytes arrive in the next turn join too,
 * and a statement costs the driver and the database far more than one more turn waits (measured
 * with `npm run bench`, PostgreSQL, 32 in flight: server CPU per signed query 143–148 → 122–127 µs,
 * PostgreSQL's 38–42 → 30 µs; per create 225–228 → 210–218 µs and 60–63 → 43–48 µs). When
 * idle, a call waits two turns of an empty loop, a few microseconds.
 *
 * No cache: every call reaches `batch`, so each caller sees the database as it is during its own
 * call, and a key asked for twice in one batch is in the batch twice. As with any DataLoader,
 * `batch` answers each key at its index, with a value or an Error for that caller alone; if it
 * throws, every caller of the batch gets the error.
 */
export function perTurnLoader<K, V>(batch: DataLoader.BatchLoadFn<K, V>): DataLoader<K, V> {
  return new DataLoader(batch, {
    cache: false,
    maxBatchSize: PER_TURN_MAX_BATCH,
    batchScheduleFn: runWithTurn,
  });
}

/** The batches of every loader due at the end of the current wait, in the order they were asked for. */
let due: (() => void)[] | undefined;

/**
 * Runs `run` two checks for I/O from now, together with every other loader's batch asked for
 * meanwhile, from one callback: their statements then leave for the database in one write per
 * connection (see PipelinedConnection's cork) instead of one write each.
 */
function runWithTurn(run: () => void): void {
  if (due) {
    due.push(run);
    return;
  }
  const runs = [run];
  due = runs;
  setImmediate(() =>
    setImmediate(() => {
      due = undefined;
      for (const each of runs) each();
    }),
  );
}
