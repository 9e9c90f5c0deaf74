/** What a TtlPromiseCache keeps and for how long. */
export interface TtlPromiseCacheOptions<K, V> {
  /** Reads the value of a key; called again once the kept promise is older than `ttlMs`. */
  readonly load: (key: K) => Promise<V>;
  /** How long a load's promise is kept, from when the load started. */
  readonly ttlMs: number;
  /** The clock (Unix ms), injected so that tests can move it. */
  readonly now: () => number;
  /** When a new load finds more than this many keys kept, they are all dropped first; no bound when omitted. */
  readonly maxEntries?: number;
}

/**
 * Values loaded by key and kept for a time-to-live. The load's promise is what is kept, from the
 * moment the load starts: the callers that arrive while it is under way share it instead of each
 * starting their own (under load, an expiry would otherwise send every request in flight to the
 * database at once). A load that fails is dropped as soon as it fails, so the next caller tries
 * again; its callers so far get the failure. A kept promise whose start lies in the future (the
 * clock went back) counts as expired.
 */
export class TtlPromiseCache<K, V> {
  private readonly kept = new Map<K, { readonly value: Promise<V>; readonly at: number }>();

  constructor(private readonly options: TtlPromiseCacheOptions<K, V>) {}

  /** The kept value of `key` while it is fresh, else a new load's, kept from now on. */
  get(key: K): Promise<V> {
    const at = this.options.now();
    const kept = this.kept.get(key);
    if (kept && kept.at <= at && at - kept.at < this.options.ttlMs) return kept.value;
    if (this.options.maxEntries !== undefined && this.kept.size > this.options.maxEntries) this.kept.clear();
    const entry = { value: this.options.load(key), at };
    this.kept.set(key, entry);
    entry.value.catch(() => {
      if (this.kept.get(key) === entry) this.kept.delete(key);
    });
    return entry.value;
  }

  /** Forgets `key`: the next `get` loads it (after a change made through this instance). */
  delete(key: K): void {
    this.kept.delete(key);
  }

  /** Forgets every key. */
  clear(): void {
    this.kept.clear();
  }
}
