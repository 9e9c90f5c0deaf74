/**
 * The fault schedule, drawn from the seed alone: the same seed gives the same faults, in the
 * same order, on the same targets, for the same durations, whatever the load did. Two lanes run
 * side by side: the platform's (processes, the database, the channels), one fault at a time, and
 * the merchants' receivers. Each lane starts with every one of its kinds once, in a seeded order,
 * so that even a short campaign meets them all; then draws kinds at random.
 */
import { Rng } from './rng.js';

export const PLATFORM_FAULTS = [
  'api-kill',
  'api-pause',
  'worker-kill',
  'worker-pause',
  'pg-terminate',
  'pg-restart-fast',
  'pg-restart-immediate',
  'simulator-kill',
  'net-delay',
  'net-blackhole',
  'net-reset',
  'bank-hold',
  'bank-batch',
] as const;
export const RECEIVER_FAULTS = ['receiver-5xx', 'receiver-timeout', 'receiver-cut'] as const;

export type PlatformFault = (typeof PLATFORM_FAULTS)[number];
export type ReceiverFault = (typeof RECEIVER_FAULTS)[number];
export type FaultKind = PlatformFault | ReceiverFault;

export interface ScheduledFault {
  readonly kind: FaultKind;
  /** `api1`, `worker2`, `psp`, `bank`, a receiver's index … ; `''` when the kind has one target. */
  readonly target: string;
  /** How long the fault lasts before it is healed (0: a single blow, such as a terminate). */
  readonly durationMs: number;
  /** The pause before it, after the previous fault of its lane recovered. */
  readonly gapMs: number;
  /** A kind's own parameter: the delay of `net-delay`. */
  readonly parameter: number;
}

export interface Schedule {
  readonly seed: number;
  readonly platform: readonly ScheduledFault[];
  readonly receivers: readonly ScheduledFault[];
}

const SIMULATORS = ['psp', 'pix', 'bank'] as const;

function draw(rng: Rng, kind: FaultKind, receivers: number): ScheduledFault {
  const gapMs = rng.int(3_000, 8_000);
  const fault = (target: string, durationMs: number, parameter = 0): ScheduledFault => ({
    kind,
    target,
    durationMs,
    gapMs,
    parameter,
  });
  switch (kind) {
    case 'api-kill':
      return fault(rng.pick(['api1', 'api2']), rng.int(1_000, 6_000));
    case 'api-pause':
      return fault(rng.pick(['api1', 'api2']), rng.int(2_000, 10_000));
    case 'worker-kill':
      return fault(rng.pick(['worker1', 'worker2']), rng.int(1_000, 6_000));
    case 'worker-pause':
      return fault(rng.pick(['worker1', 'worker2']), rng.int(2_000, 12_000));
    case 'pg-terminate':
      return fault('', 0);
    case 'pg-restart-fast':
    case 'pg-restart-immediate':
      return fault('', rng.int(0, 3_000));
    case 'simulator-kill':
      return fault(rng.pick(SIMULATORS), rng.int(1_000, 8_000));
    case 'net-delay':
      return fault(rng.pick(SIMULATORS), rng.int(4_000, 15_000), rng.int(200, 4_000));
    case 'net-blackhole':
    case 'net-reset':
      return fault(rng.pick(SIMULATORS), rng.int(3_000, 12_000));
    case 'bank-hold':
      return fault('bank', rng.int(5_000, 20_000));
    case 'bank-batch':
      return fault('bank', rng.int(10_000, 30_000));
    case 'receiver-5xx':
    case 'receiver-timeout':
    case 'receiver-cut':
      return fault(String(rng.int(0, receivers - 1)), rng.int(5_000, 30_000));
  }
}

/** A seeded permutation of `kinds`. */
function shuffled<T>(rng: Rng, kinds: readonly T[]): T[] {
  const out = [...kinds];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * A lane long enough for `minutes` (each fault and its gap take at least a few seconds). Each
 * fault is drawn right after its kind, so a longer campaign of the same seed begins with the
 * shorter one's faults.
 */
function lane(rng: Rng, kinds: readonly FaultKind[], minutes: number, receivers: number): ScheduledFault[] {
  const count = Math.max(kinds.length, Math.ceil((minutes * 60) / 3));
  const lap = shuffled(rng, kinds);
  return Array.from({ length: count }, (_, i) => draw(rng, lap[i] ?? rng.pick(kinds), receivers));
}

export function makeSchedule(seed: number, minutes: number, receivers: number): Schedule {
  return {
    seed,
    platform: lane(new Rng(seed, 1), PLATFORM_FAULTS, minutes, receivers),
    receivers: lane(new Rng(seed, 2), RECEIVER_FAULTS, minutes, receivers),
  };
}
