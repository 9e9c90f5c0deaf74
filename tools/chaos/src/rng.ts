/**
 * Seeded random choices (pure-rand's xoroshiro128+), one independent stream per use: the fault
 * schedule draws from its own stream, so the same seed gives the same schedule whatever the load
 * did meanwhile.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

export class Rng {
  private readonly generator: RandomGenerator;

  constructor(seed: number, stream = 0) {
    // Streams of one seed are far apart: each starts from the seed mixed with its number.
    this.generator = xoroshiro128plus((seed ^ Math.imul(stream + 1, 0x9e3779b1)) | 0);
  }

  /** An integer in [from, to]. */
  int(from: number, to: number): number {
    return uniformInt(this.generator, from, to);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('nothing to pick from');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** One of `weights`' keys, each as likely as its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
    let draw = this.int(0, Math.max(0, Math.round(total * 1000) - 1)) / 1000;
    for (const [key, weight] of entries) {
      if (draw < weight) return key;
      draw -= weight;
    }
    return (entries.at(-1) as [K, number])[0];
  }
}

/** A seed for a run that was given none: 31 bits, printed so the run can be replayed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x7fffffff);
}
