// How much of the machine's CPU time the hypervisor gave to other guests ("steal"), for the
// benches. On a shared virtual machine a neighbour can take half of every core for minutes; a rate
// measured then says more about the neighbour than about the code, and the bench says so next to it.
import { readFileSync } from 'node:fs';

/** A round measured while more than this share of the CPU was stolen is measured again (section api). */
export const STEAL_LIMIT = 0.1;

/** The whole machine's CPU ticks so far from /proc/stat's `cpu` line: all, and those stolen; undefined off Linux. */
function machineTicks() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is within user).
  const fields = line.startsWith('cpu ') ? line.trim().split(/\s+/).slice(1, 9).map(Number) : [];
  if (fields.length < 8 || !fields.every(Number.isFinite)) return undefined;
  return { total: fields.reduce((sum, n) => sum + n, 0), stolen: fields[7] };
}

/**
 * Starts a measurement; the function it returns gives the share (0–1) of the machine's CPU time
 * stolen since, or 0 where the kernel does not tell (not Linux, or no tick passed).
 */
export function stealMeter() {
  const start = machineTicks();
  return () => {
    const end = machineTicks();
    if (!start || !end || end.total <= start.total) return 0;
    return (end.stolen - start.stolen) / (end.total - start.total);
  };
}

/** `12%` */
export const percent = (share) => `${(100 * share).toFixed(0)}%`;
