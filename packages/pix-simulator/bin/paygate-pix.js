#!/usr/bin/env node
// `npx paygate-pix`: the channel simulator. Runs the build (npm ci builds it); from a checkout
// without a build it runs the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const built = new URL('../dist/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
