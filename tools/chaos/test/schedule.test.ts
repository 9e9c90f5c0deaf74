import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../src/rng.js';
import { makeSchedule, PLATFORM_FAULTS, RECEIVER_FAULTS } from '../src/schedule.js';

test('a seed replays its schedule exactly; another seed gives another', () => {
  const a = makeSchedule(1234, 10, 4);
  assert.deepEqual(makeSchedule(1234, 10, 4), a);
  assert.notDeepEqual(makeSchedule(1235, 10, 4), a);
  // A longer campaign of the same seed starts with the same faults.
  assert.deepEqual(makeSchedule(1234, 60, 4).platform.slice(0, a.platform.length), a.platform);
});

test('each lane meets every kind of its own in its first lap, with targets and durations in range', () => {
  for (const seed of [0, 1, 42, 2 ** 31 - 1]) {
    const schedule = makeSchedule(seed, 3, 4);
    const platform = schedule.platform.slice(0, PLATFORM_FAULTS.length).map((f) => f.kind);
    assert.deepEqual([...platform].sort(), [...PLATFORM_FAULTS].sort());
    const receivers = schedule.receivers.slice(0, RECEIVER_FAULTS.length).map((f) => f.kind);
    assert.deepEqual([...receivers].sort(), [...RECEIVER_FAULTS].sort());
    for (const fault of [...schedule.platform, ...schedule.receivers]) {
      assert.ok(fault.durationMs >= 0 && fault.durationMs <= 30_000, `${fault.kind} ${fault.durationMs}`);
      assert.ok(fault.gapMs >= 3_000 && fault.gapMs <= 8_000);
      if (fault.kind.startsWith('receiver-')) assert.ok(['0', '1', '2', '3'].includes(fault.target));
      if (fault.kind.startsWith('net-') || fault.kind === 'simulator-kill')
        assert.ok(['psp', 'pix', 'bank'].includes(fault.target));
      if (fault.kind === 'net-delay') assert.ok(fault.parameter >= 200 && fault.parameter <= 4_000);
    }
  }
});

test('streams of one seed are independent and reproducible', () => {
  const draw = (rng: Rng) => Array.from({ length: 20 }, () => rng.int(0, 1_000_000));
  assert.deepEqual(draw(new Rng(7, 1)), draw(new Rng(7, 1)));
  assert.notDeepEqual(draw(new Rng(7, 1)), draw(new Rng(7, 2)));
  const rng = new Rng(7, 3);
  const counts = { a: 0, b: 0 };
  for (let i = 0; i < 2000; i++) counts[rng.weighted({ a: 3, b: 1 })] += 1;
  assert.ok(counts.a > counts.b * 2 && counts.a < counts.b * 4, JSON.stringify(counts));
});
