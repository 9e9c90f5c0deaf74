import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { describe, it } from 'node:test';

/**
 * The floors of packages/server/src (docs/architecture.md, "Floors"), from the ground up:
 * - the base: every file that is neither a module nor the assembly. Data and pure helpers (the
 *   currency and method catalogue, fee arithmetic, the URL rule, the SSRF guard), config, the
 *   database layer, errors, observability. A base file imports base files only.
 * - the modules: `modules/<noun>/`. A module imports the base, other modules and MODULES_MAY_USE.
 * - the assembly: the files listed in ASSEMBLY, which build the whole from the modules (the
 *   services, the app and its HTTP scopes, the error catalogue, the OpenAPI document) and run it
 *   (the entry points, the workers, the command line). They may import anything.
 * And no file of src imports itself back, through any number of others: no import circles.
 */
export const ASSEMBLY: readonly string[] = [
  'app.ts',
  'services.ts',
  'platform.ts',
  'main.ts',
  'index.ts',
  'cli/',
  'worker/',
  'openapi/document.ts',
  // The one catalogue of failure codes, merged from each module's errors.ts, and the scopes
  // that answer from it.
  'http/errors.ts',
  'http/header-limits.ts',
  'http/merchant-api.ts',
];

/**
 * What a module may take from the assembly: the HTTP helpers of the scope that registers its
 * routes. Nothing else: no module reaches into services.ts (it names the services it is handed
 * by their own types), cli/, worker/ or the entry points.
 */
export const MODULES_MAY_USE: readonly string[] = ['http/errors.ts', 'http/merchant-api.ts'];

export type Floor = 'base' | 'module' | 'assembly';

/** The floor of a file, by its path inside src (POSIX separators). */
export function floorOf(path: string): Floor {
  if (path.startsWith('modules/')) return 'module';
  if (ASSEMBLY.some((entry) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry))) return 'assembly';
  return 'base';
}

const SRC = new URL('../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

/** Comments out, so that an import named in prose is not an arrow. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/**
 * The files of src that `text` (the file at `path`) imports: static imports and re-exports,
 * type-only ones too, and `import()` of a literal path.
 */
export function importsOf(path: string, text: string): string[] {
  const code = withoutComments(text);
  const specifiers = [
    ...code.matchAll(/\b(?:from|import)\s*['"](\.{1,2}\/[^'"]+)['"]/g),
    ...code.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g),
  ].map((match) => match[1] as string);
  return [...new Set(specifiers.map((spec) => posix.join(posix.dirname(path), spec).replace(/\.js$/, '.ts')))];
}

/** The import circles of a graph, each as its files in a loop (the first file again at the end). */
export function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const circles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string) => {
    const at = onPath.indexOf(file);
    if (at >= 0) {
      circles.push([...onPath.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    onPath.push(file);
    for (const next of graph.get(file) ?? []) visit(next);
    onPath.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return circles;
}

/**
 * The imports that break the floors: a base file importing a module or the assembly, a module
 * importing a file of the assembly other than MODULES_MAY_USE.
 */
export function floorBreaches(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const allowed = (from: Floor, to: string) =>
    from === 'assembly' ||
    floorOf(to) === 'base' ||
    (from === 'module' && (floorOf(to) === 'module' || MODULES_MAY_USE.includes(to)));
  return [...graph].flatMap(([file, imports]) =>
    imports
      .filter((to) => !allowed(floorOf(file), to))
      .map((to) => `${file} (${floorOf(file)}) imports ${to} (${floorOf(to)})`),
  );
}

function serverGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const path = relative(SRC, file).split(sep).join('/');
    graph.set(path, importsOf(path, readFileSync(file, 'utf8')));
  }
  return graph;
}

describe('the floors of packages/server/src', () => {
  const graph = serverGraph();

  it('reads the imports of every file, and they name files that exist', () => {
    assert.ok(graph.size > 50, 'the source files were read');
    const missing = [...graph].flatMap(([file, imports]) =>
      imports.filter((to) => !graph.has(to)).map((to) => `${file} -> ${to}`),
    );
    assert.deepEqual(missing, []);
    assert.ok(graph.get('app.ts')?.includes('services.ts'), 'app.ts imports services.ts');
  });

  it('has no import circle', () => {
    assert.deepEqual(
      circlesOf(graph).map((circle) => circle.join(' -> ')),
      [],
      'break the circle: move what both sides need into a file below both',
    );
  });

  it('base files import only base files; modules import the base, modules and MODULES_MAY_USE', () => {
    assert.deepEqual(floorBreaches(graph), [], 'move what the base needs below the modules');
  });

  it('every entry of ASSEMBLY and MODULES_MAY_USE exists', () => {
    for (const entry of [...ASSEMBLY, ...MODULES_MAY_USE]) {
      assert.ok(
        [...graph.keys()].some((file) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)),
        entry,
      );
    }
  });

  it('the checks see circles, breaches and every shape of import (so that finding none means something)', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "import './d.js';",
      "const { e } = await import('./e.js');",
      "// import { f } from './f.js';",
      "import { z } from 'zod';",
    ].join('\n');
    assert.deepEqual(importsOf('http/x.ts', text).sort(), ['b.ts', 'http/a.ts', 'http/c.ts', 'http/d.ts', 'http/e.ts']);
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['modules/m/c.ts']],
      ['modules/m/c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
    ]);
    assert.deepEqual(circlesOf(looped), [
      ['a.ts', 'b.ts', 'modules/m/c.ts', 'a.ts'],
      ['d.ts', 'd.ts'],
    ]);
    assert.deepEqual(floorBreaches(looped), ['b.ts (base) imports modules/m/c.ts (module)']);
    assert.deepEqual(floorBreaches(new Map([['db/x.ts', ['services.ts', 'money.ts']]])), [
      'db/x.ts (base) imports services.ts (assembly)',
    ]);
    assert.deepEqual(floorBreaches(new Map([['modules/m/x.ts', ['http/errors.ts', 'modules/n/y.ts', 'ids.ts']]])), []);
    assert.deepEqual(floorBreaches(new Map([['modules/m/x.ts', ['services.ts']]])), [
      'modules/m/x.ts (module) imports services.ts (assembly)',
    ]);
    assert.deepEqual(floorBreaches(new Map([['modules/m/x.ts', ['cli/failure.ts']]])), [
      'modules/m/x.ts (module) imports cli/failure.ts (assembly)',
    ]);
    assert.deepEqual(floorBreaches(new Map([['worker/x.ts', ['modules/m/y.ts', 'app.ts']]])), []);
    assert.equal(floorOf('cli/main.ts'), 'assembly');
    assert.equal(floorOf('catalog.ts'), 'base');
  });
});
