/**
 * Lookups by a unique key that arrive in the same turn of the event loop, answered by one
 * statement for all of them. Under load the requests whose nonces were recorded together reach
 * their reads together, so N reads cost one round trip and one statement execution instead of N:
 * on PostgreSQL the round trip (a socket write and a wake-up of the backend) is the largest cost
 * of a signed query after the signature itself.
 *
 * Each caller still reads committed data no older than its own call: the statement starts after
 * every lookup it answers was asked for.
 */
export class BatchedLookup<K, R> {
  private waiting: { key: K; resolve: (row: R | undefined) => void; reject: (error: unknown) => void }[] = [];

  /**
   * @param fetch reads the rows for a batch of keys (a row per key found, any order)
   * @param keyOfRow the key a returned row answers
   * @param maxBatch at most this many keys per statement
   */
  constructor(
    private readonly fetch: (keys: K[]) => Promise<R[]>,
    private readonly keyOfRow: (row: R) => K,
    private readonly maxBatch = 256,
  ) {}

  /** The row with this key, or `undefined`. */
  load(key: K): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0, this.maxBatch);
    if (this.waiting.length > 0) setImmediate(() => void this.flush());
    try {
      const rows = await this.fetch([...new Set(batch.map((entry) => entry.key))]);
      const byKey = new Map(rows.map((row) => [this.keyOfRow(row), row]));
      for (const entry of batch) entry.resolve(byKey.get(entry.key));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }
}
