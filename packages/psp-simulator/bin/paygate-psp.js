#!/usr/bin/env node
// `npx paygate-psp`: the channel simulator. Runs the build (npm ci builds it); from a checkout
// without a build it runs the TypeScript sources through tsx, with workspace packages
// (@paygate/simulator-kit) resolved to their sources too (the "source" export condition).
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const built = new URL('../dist/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const sourceFirst =
    'export async function resolve(specifier, context, next) {' +
    " return next(specifier, { ...context, conditions: [...new Set(['source', ...context.conditions])] }); }";
  register(`data:text/javascript,${encodeURIComponent(sourceFirst)}`);
  const tsx = await import('tsx/esm/api');
  tsx.register();
  await import(new URL('../src/main.ts', import.meta.url).href);
}
