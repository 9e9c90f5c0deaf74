import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_VARIABLES } from '../src/config.js';

const README = new URL('../../../README.md', import.meta.url);

/** The variables the README's configuration table names in its first column. */
function tableVariables(markdown: string): string[] {
  const section = markdown.split(/^## Configuration\n/m)[1]?.split(/^## /m)[0] ?? '';
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1] ?? '';
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.push(match[1] as string);
  }
  return names;
}

describe("the README's configuration table", () => {
  const listed = tableVariables(readFileSync(README, 'utf8'));

  it('lists every variable the configuration schema reads', () => {
    const missing = CONFIG_VARIABLES.filter((name) => !listed.includes(name));
    assert.deepEqual(missing, [], `missing from README.md's configuration table: ${missing.join(', ')}`);
  });

  it('lists no variable the schema does not read, and each once', () => {
    const unknown = listed.filter((name) => !CONFIG_VARIABLES.includes(name));
    assert.deepEqual(unknown, [], `README.md's configuration table names variables the server does not read`);
    assert.equal(new Set(listed).size, listed.length, 'a variable is listed twice');
  });
});
