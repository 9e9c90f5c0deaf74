/**
 * The per-turn loader (db/per-turn.ts): what joins one batch. Every batched statement of the hot
 * path (nonces, payment creates, reads by order number) goes through it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PER_TURN_MAX_BATCH, perTurnLoader } from '../src/db/per-turn.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A loader that answers each key doubled and records its batches. */
function recording() {
  const batches: number[][] = [];
  const loader = perTurnLoader<number, number>(async (keys) => {
    batches.push([...keys]);
    return keys.map((key) => key * 2);
  });
  return { loader, batches };
}

describe('perTurnLoader', () => {
  it('batches the calls of this turn and the next one, answering each caller', async () => {
    const { loader, batches } = recording();
    const first = [loader.load(1), loader.load(2)];
    await nextTurn();
    const second = [loader.load(3)];
    assert.deepEqual(await Promise.all([...first, ...second]), [2, 4, 6]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('does not wait longer: a call two turns later goes into the next batch', async () => {
    const { loader, batches } = recording();
    const first = loader.load(1);
    await nextTurn();
    await nextTurn();
    const later = loader.load(2);
    assert.deepEqual(await Promise.all([first, later]), [2, 4]);
    assert.deepEqual(batches, [[1], [2]]);
  });

  it('splits a turn with more calls than a batch may hold', async () => {
    const { loader, batches } = recording();
    const keys = Array.from({ length: PER_TURN_MAX_BATCH + 1 }, (_, i) => i);
    await Promise.all(keys.map((key) => loader.load(key)));
    assert.deepEqual(
      batches.map((batch) => batch.length),
      [PER_TURN_MAX_BATCH, 1],
    );
  });

  it("runs every loader's batch of one turn from one callback, so that their statements leave together", async () => {
    const ran: string[] = [];
    /** What had run when the callback that ran each batch was over. */
    const seenAfter: Record<string, string[]> = {};
    const loaderNamed = (name: string) =>
      perTurnLoader<number, number>(async (keys) => {
        ran.push(name);
        process.nextTick(() => (seenAfter[name] = [...ran]));
        return keys.map((key) => key);
      });
    const nonces = loaderNamed('nonces');
    const reads = loaderNamed('reads');
    const first = nonces.load(1);
    await nextTurn();
    // Asked for a turn later, by another loader: due with the first, run in the same callback.
    await Promise.all([first, reads.load(2)]);
    assert.deepEqual(ran, ['nonces', 'reads']);
    assert.deepEqual(seenAfter.nonces, ['nonces', 'reads']);
  });

  it('asks again for a key asked for twice (no cache)', async () => {
    const { loader, batches } = recording();
    await Promise.all([loader.load(7), loader.load(7)]);
    await loader.load(7);
    assert.deepEqual(batches, [[7, 7], [7]]);
  });
});
