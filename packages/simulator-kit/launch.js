// What each simulator's bin (`npx paygate-psp`, `paygate-pix`, `paygate-bank`) does, in one place.
// Plain JavaScript beside src/ and exported as it is (`@paygate/simulator-kit/launch`): a bin
// loads it before anything is known to be built and before the "source" condition is on.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

/**
 * Runs the simulator whose bin is at `binUrl` (the bin's `import.meta.url`): its build
 * (`../dist/main.js`; npm ci builds it), or, from a checkout without a build, its TypeScript
 * sources (`../src/main.ts`) through tsx, with the workspace packages it uses (this kit,
 * @paygate/pix, @paygate/iso20022) resolved to their sources too (the "source" export condition).
 */
export async function launch(binUrl) {
  const built = new URL('../dist/main.js', binUrl);
  if (existsSync(built)) {
    await import(built.href);
    return;
  }
  const sourceFirst =
    'export async function resolve(specifier, context, next) {' +
    " return next(specifier, { ...context, conditions: [...new Set(['source', ...context.conditions])] }); }";
  register(`data:text/javascript,${encodeURIComponent(sourceFirst)}`);
  const tsx = await import('tsx/esm/api');
  tsx.register();
  await import(new URL('../src/main.ts', binUrl).href);
}
