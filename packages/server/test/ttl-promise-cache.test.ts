/**
 * The TTL promise cache (cache/ttl-promise-cache.ts) behind the merchant and platform-key caches:
 * one load shared by the callers that arrive while it runs, kept for its time-to-live by the
 * injected clock, never kept once it has failed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TtlPromiseCache } from '../src/cache/ttl-promise-cache.js';

const TTL = 1_000;

/** A cache over loads the test settles itself, counting them. */
function setup(options: { maxEntries?: number } = {}) {
  let clock = 10_000;
  const loads: { key: string; resolve: (value: string) => void; reject: (error: Error) => void }[] = [];
  const cache = new TtlPromiseCache<string, string>({
    ttlMs: TTL,
    now: () => clock,
    load: (key) => new Promise((resolve, reject) => loads.push({ key, resolve, reject })),
    ...options,
  });
  return {
    cache,
    loads,
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

describe('TtlPromiseCache', () => {
  it('callers arriving while a load runs share it', async () => {
    const { cache, loads } = setup();
    const first = cache.get('a');
    const second = cache.get('a');
    assert.equal(second, first);
    assert.equal(loads.length, 1);
    loads[0]?.resolve('A');
    assert.deepEqual(await Promise.all([first, second, cache.get('a')]), ['A', 'A', 'A']);
    assert.equal(loads.length, 1);
  });

  it('keys are loaded apart', () => {
    const { cache, loads } = setup();
    void cache.get('a');
    void cache.get('b');
    assert.deepEqual(
      loads.map((load) => load.key),
      ['a', 'b'],
    );
  });

  it('keeps a value for its time-to-live from the start of its load, then loads again', async () => {
    const { cache, loads, advance } = setup();
    const first = cache.get('a');
    loads[0]?.resolve('A');
    await first;
    advance(TTL - 1);
    assert.equal(cache.get('a'), first);
    advance(1);
    const second = cache.get('a');
    assert.notEqual(second, first);
    assert.equal(loads.length, 2);
    loads[1]?.resolve('A2');
    assert.equal(await second, 'A2');
    assert.equal(await cache.get('a'), 'A2');
  });

  it('counts a value as expired when the clock went back past its load', () => {
    const { cache, loads, advance } = setup();
    void cache.get('a');
    advance(-1);
    void cache.get('a');
    assert.equal(loads.length, 2);
  });

  it('does not keep a failed load: its callers get the failure, the next caller loads again', async () => {
    const { cache, loads } = setup();
    const first = cache.get('a');
    const shared = cache.get('a');
    loads[0]?.reject(new Error('database down'));
    await assert.rejects(first, /database down/);
    await assert.rejects(shared, /database down/);
    const retry = cache.get('a');
    assert.equal(loads.length, 2);
    loads[1]?.resolve('A');
    assert.equal(await retry, 'A');
  });

  it('a load that fails after it was replaced leaves its replacement kept', async () => {
    const { cache, loads, advance } = setup();
    const old = cache.get('a');
    advance(TTL);
    const replacement = cache.get('a');
    loads[0]?.reject(new Error('late failure'));
    await assert.rejects(old, /late failure/);
    assert.equal(cache.get('a'), replacement);
    assert.equal(loads.length, 2);
  });

  it('delete and clear forget what was kept', () => {
    const { cache, loads } = setup();
    void cache.get('a');
    void cache.get('b');
    cache.delete('a');
    void cache.get('a');
    void cache.get('b');
    assert.equal(loads.length, 3);
    cache.clear();
    void cache.get('b');
    assert.equal(loads.length, 4);
  });

  it('with maxEntries, a load that finds more keys kept drops them all first', () => {
    const { cache, loads } = setup({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) void cache.get(key);
    void cache.get('a');
    assert.equal(loads.length, 3, 'three kept: a is still fresh');
    void cache.get('d');
    for (const key of ['a', 'b', 'c']) void cache.get(key);
    assert.equal(loads.length, 7, 'd found three kept and dropped them');
  });
});
