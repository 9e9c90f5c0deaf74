#!/usr/bin/env node
// Packs the publishable packages into one folder, in dependency order (@paygate/protocol, then
// @paygate/wire, then @paygate/merchant), after a build, and prints the tarballs' paths one a
// line. `npm publish` of each tarball in that order publishes a consistent set.
// Usage: node scripts/release.mjs [OUT_DIR]   (default: ./release)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
export const PUBLISHED = ['protocol', 'wire', 'merchant'];

const out = resolve(process.argv[2] ?? join(root, 'release'));
mkdirSync(out, { recursive: true });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(
  process.execPath,
  [join(root, 'node_modules/typescript/bin/tsc'), '-b', ...PUBLISHED.map((name) => join(root, 'packages', name))],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
const versions = new Map();
for (const name of PUBLISHED) {
  const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'));
  versions.set(manifest.name, manifest.version);
  for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
    if (!/^[\^~]?\d+\.\d+\.\d+$/.test(range))
      throw new Error(`${manifest.name}: ${dependency} is "${range}", not a semver range`);
    if (dependency.startsWith('@paygate/') && !versions.has(dependency)) {
      throw new Error(`${manifest.name} depends on ${dependency}, which is not packed before it`);
    }
  }
  const [packed] = JSON.parse(
    execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', out], {
      cwd: join(root, 'packages', name),
      encoding: 'utf8',
    }),
  );
  console.log(join(out, packed.filename));
}
