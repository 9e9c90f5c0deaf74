#!/usr/bin/env node
// A flame graph (SVG) of a V8 CPU profile (`node --cpu-prof`, or `npm run bench` with
// BENCH_CPU_PROF=<dir>), made here without any service: `node scripts/flamegraph.mjs
// [--skip=SECONDS] [--from=FUNCTION] in.cpuprofile out.svg [title]`. The idle time is left out (the graph is of the busy time; the title says how
// much was idle), frames are coloured by where their code lives, and the busiest functions by
// self time and the share of each kind of code are printed, for the text that reads the graph.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
/** `--skip=S`: samples of the first S seconds are left out (a process's start, before its load). */
const skipArg = args.find((arg) => arg.startsWith('--skip='));
const skipSeconds = skipArg ? Number(skipArg.slice('--skip='.length)) : 0;
/** `--from=NAME`: samples before the first one in a call of function NAME are left out (the load's start). */
const fromArg = args.find((arg) => arg.startsWith('--from='));
const fromFunction = fromArg ? fromArg.slice('--from='.length) : undefined;
const [input, output, title = basename(input ?? '')] = args.filter((arg) => !arg.startsWith('--'));
if (!input || !output) {
  console.error(
    'usage: node scripts/flamegraph.mjs [--skip=SECONDS] [--from=FUNCTION] <in.cpuprofile> <out.svg> [title]',
  );
  process.exit(2);
}
const profile = JSON.parse(readFileSync(input, 'utf8'));

/** Where a frame's code lives: the colour of its box and the line of the summary it counts in. */
function kindOf(frame) {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)' || functionName === '(root)') return 'v8';
  // The only WebAssembly in the process is the embedded database's.
  if (url.includes('@electric-sql/pglite') || url.startsWith('wasm://')) return 'pglite';
  if (functionName === 'wasm-to-js' || functionName === 'js-to-wasm') return 'pglite';
  if (/node_modules\/(sodium-native|tweetnacl|@noble)\//.test(url)) return 'crypto';
  if (/node_modules\/(pg|pg-protocol|pg-types|postgres-[a-z]+|pg-pool)\//.test(url)) return 'pg';
  if (url.includes('node_modules/')) return 'dependencies';
  if (url.includes('/packages/')) return 'paygate';
  if (url.startsWith('node:') || url === '') return 'node';
  return 'other';
}
const COLOURS = {
  paygate: [230, 140, 40],
  pg: [70, 130, 200],
  pglite: [150, 90, 200],
  crypto: [60, 170, 170],
  dependencies: [200, 190, 60],
  node: [90, 170, 90],
  gc: [210, 70, 70],
  v8: [150, 150, 150],
  other: [180, 180, 140],
};

const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
/** Whether the sample's stack (node `id` and its callers) is in a call of `name`. */
const within = (id, name) => {
  for (let at = id; at !== undefined; at = parents.get(at)) {
    if (nodes.get(at)?.callFrame.functionName === name) return true;
  }
  return false;
};
const self = new Map();
let elapsedUs = 0;
let started = fromFunction === undefined;
(profile.samples ?? []).forEach((id, i) => {
  elapsedUs += profile.timeDeltas?.[i] ?? 0;
  started ||= within(id, fromFunction);
  if (started && elapsedUs >= skipSeconds * 1e6) self.set(id, (self.get(id) ?? 0) + 1);
});
const sampled = (profile.samples ?? []).length > 0;
const selfOf = (node) => (sampled ? (self.get(node.id) ?? 0) : (node.hitCount ?? 0));

const label = (frame) => {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|packages)\//, '');
  return `${name} ${file}:${frame.lineNumber + 1}`;
};

/** The call tree with siblings of one function merged, each with its total and self samples. */
function build(node) {
  const merged = new Map();
  for (const childId of node.children ?? []) {
    const child = build(nodes.get(childId));
    const key = label(child.frame);
    const same = merged.get(key);
    if (!same) merged.set(key, child);
    else {
      same.total += child.total;
      same.self += child.self;
      same.children.push(...child.children);
    }
  }
  const children = [...merged.values()].sort((a, b) => b.total - a.total);
  const own = selfOf(node);
  return {
    frame: node.callFrame,
    self: own,
    total: own + children.reduce((sum, child) => sum + child.total, 0),
    children,
  };
}
const root = build(profile.nodes[0]);
const idle = root.children.filter((child) => child.frame.functionName === '(idle)');
const idleSamples = idle.reduce((sum, child) => sum + child.total, 0);
root.children = root.children.filter((child) => child.frame.functionName !== '(idle)');
root.total -= idleSamples;
const all = root.total + idleSamples;

// Self time by function and by kind of code, over the busy samples.
const byFunction = new Map();
const byKind = new Map();
(function walk(node) {
  if (node.self > 0) {
    const key = label(node.frame);
    byFunction.set(key, (byFunction.get(key) ?? 0) + node.self);
    const kind = kindOf(node.frame);
    byKind.set(kind, (byKind.get(kind) ?? 0) + node.self);
  }
  for (const child of node.children) walk(child);
})(root);
const share = (n) => `${((100 * n) / Math.max(root.total, 1)).toFixed(1)} %`;
console.log(`${title}: ${root.total} busy samples, ${((100 * idleSamples) / Math.max(all, 1)).toFixed(0)} % idle`);
console.log(
  'self time by kind of code: ' +
    [...byKind.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([kind, n]) => `${kind} ${share(n)}`)
      .join(', '),
);
for (const [name, n] of [...byFunction.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
  console.log(`${share(n).padStart(7)}  ${name}`);
}

// The SVG: the root at the bottom, one row per depth, widths by total samples.
const WIDTH = 1600;
const ROW = 16;
const MIN_WIDTH = 1;
/** Deeper frames are left out (module loading recurses hundreds deep; the request paths are not). */
const MAX_DEPTH = 64;
let depth = 0;
const boxes = [];
(function place(node, x, level) {
  const width = (node.total / Math.max(root.total, 1)) * WIDTH;
  if (width < MIN_WIDTH || level > MAX_DEPTH) return;
  depth = Math.max(depth, level);
  boxes.push({ node, x, level, width });
  let at = x;
  for (const child of node.children) {
    place(child, at, level + 1);
    at += (child.total / Math.max(root.total, 1)) * WIDTH;
  }
})(root, 0, 0);
const HEADER = 48;
const height = HEADER + (depth + 1) * ROW + 24;
const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const hash = (text) => [...text].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`,
  `<rect width="100%" height="100%" fill="#fff"/>`,
  `<text x="8" y="18" font-size="14">${escape(title)}</text>`,
  `<text x="8" y="36" fill="#444">${escape(
    `${root.total} busy samples (${((100 * idleSamples) / Math.max(all, 1)).toFixed(0)} % of all idle, left out); colours: ` +
      'orange paygate, blue pg, purple PGlite, teal crypto (sodium), yellow other dependencies, green Node, red GC, grey V8',
  )}</text>`,
];
for (const { node, x, level, width } of boxes) {
  const y = height - 24 - (level + 1) * ROW;
  const [r, g, b] = COLOURS[kindOf(node.frame)];
  const jitter = (hash(label(node.frame)) % 30) - 15;
  const fill = `rgb(${Math.max(0, Math.min(255, r + jitter))},${Math.max(0, Math.min(255, g + jitter))},${Math.max(
    0,
    Math.min(255, b + jitter),
  )})`;
  const name = level === 0 ? 'all busy samples' : label(node.frame);
  const tip = `${name} — ${share(node.total)} total, ${share(node.self)} self`;
  const chars = Math.floor((width - 4) / 6.6);
  const text = chars >= 3 ? (name.length > chars ? `${name.slice(0, chars - 1)}…` : name) : '';
  parts.push(
    `<g><title>${escape(tip)}</title><rect x="${x.toFixed(2)}" y="${y}" width="${width.toFixed(2)}" height="${ROW - 1}" fill="${fill}"/>` +
      (text ? `<text x="${(x + 2).toFixed(2)}" y="${y + 11}">${escape(text)}</text>` : '') +
      '</g>',
  );
}
parts.push('</svg>');
writeFileSync(output, parts.join('\n'));
