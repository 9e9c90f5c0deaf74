#!/usr/bin/env node
// Where a process spends more per request than another: two V8 CPU profiles (say the auth-only
// ceiling's and the platform's, from `npm run bench` with BENCH_CPU_PROF=<dir>, which writes them
// to <dir>/ceiling and <dir>/platform), their self time set side by side per request.
//
//   node scripts/profile-diff.mjs [--skip=SECONDS | --window=FROM-TO] [--by=package|function] [--top=N] a.cpuprofile b.cpuprofile
//
// --window keeps the samples taken between two instants of the machine's monotonic clock, in
// microseconds (what `process.hrtime` counts and V8 stamps its samples with): the api section,
// with BENCH_CPU_PROF, writes each row's window and its two servers' pids to <dir>/rows.json, so
// that two whole-life profiles are set side by side over one row's rounds.
//
// Neither profile says how many requests it served, so the unit is a function both call exactly
// once per request for the same work: the Ed25519 verification of the request's signature
// (`crypto_sign_verify_detached`, native, its cost independent of the process around it). Every
// figure is in those units: 0.25 means a quarter of what verifying one signature takes. Rows are
// sorted by what the second profile spends more; idle time is left out.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const arg = args.find((each) => each.startsWith(`--${name}=`));
  return arg ? arg.slice(name.length + 3) : fallback;
};
const skipSeconds = Number(option('skip', '3'));
const window = option('window', undefined)?.split('-').map(Number);
if (window && (window.length !== 2 || !window.every(Number.isFinite) || window[0] >= window[1])) {
  console.error('--window=FROM-TO: two instants in microseconds of the monotonic clock, FROM before TO');
  process.exit(2);
}
const by = option('by', 'package');
const top = Number(option('top', '30'));
const UNIT = 'crypto_sign_verify_detached';
const [first, second] = args.filter((arg) => !arg.startsWith('--'));
if (!first || !second || (by !== 'package' && by !== 'function')) {
  console.error(
    'usage: node scripts/profile-diff.mjs [--skip=SECONDS | --window=FROM-TO] [--by=package|function] [--top=N] <a.cpuprofile> <b.cpuprofile>',
  );
  process.exit(2);
}

/** Where a frame's code is: `node_modules/<package>`, `packages/<name>/<dir>/<dir>`, a node: module or a native name. */
function placeOf(url, functionName) {
  const file = url.replace(/^file:\/\//, '');
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (dependency) return dependency[1];
  const own = /\/packages\/([^/]+\/[^/]+(?:\/[^/]+){0,2})/.exec(file);
  if (own) return own[1].replace(/\.[cm]?[jt]s$/, '');
  return file || functionName;
}

/** Self samples per key over the busy samples after `skipSeconds` (or within `window`), and the unit's samples. */
function selfTime(path) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const samples = new Map();
  let unit = 0;
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    elapsedUs += profile.timeDeltas[i] ?? 0;
    if (window) {
      const at = profile.startTime + elapsedUs;
      if (at < window[0] || at > window[1]) return;
    } else if (elapsedUs < skipSeconds * 1e6) return;
    const { functionName, url } = nodes.get(id).callFrame;
    if (functionName === '(idle)') return;
    if (functionName.endsWith(UNIT)) unit++;
    const place = placeOf(url, functionName);
    const key = by === 'package' ? place : `${functionName || '(anonymous)'}  ${place}`;
    samples.set(key, (samples.get(key) ?? 0) + 1);
  });
  if (unit === 0)
    throw new Error(
      `${path}: no sample in ${UNIT} ${window ? `within ${window.join('-')}` : `after ${skipSeconds} s`}`,
    );
  return { samples, unit };
}

const a = selfTime(first);
const b = selfTime(second);
const inUnits = (side, key) => (side.samples.get(key) ?? 0) / side.unit;
const total = (side) => [...side.samples.values()].reduce((sum, n) => sum + n, 0) / side.unit;
const rows = [...new Set([...a.samples.keys(), ...b.samples.keys()])]
  .map((key) => ({ key, a: inUnits(a, key), b: inUnits(b, key) }))
  .sort((x, y) => y.b - y.a - (x.b - x.a));
const figure = (n) => n.toFixed(3).padStart(7);
console.log(`per request, in Ed25519 verifications (${UNIT}); first: ${first}; second: ${second}`);
console.log(`${figure(total(a))} ${figure(total(b))} ${figure(total(b) - total(a))}  all busy time`);
console.log('  first  second    more  where');
for (const row of [...rows.slice(0, top), ...rows.slice(Math.max(top, rows.length - 5))]) {
  console.log(`${figure(row.a)} ${figure(row.b)} ${figure(row.b - row.a)}  ${row.key}`);
}
