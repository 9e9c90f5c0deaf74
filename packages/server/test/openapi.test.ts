import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { openApiJson } from '../src/openapi/document.js';

it('the committed openapi.json is the document the code describes (run `npm run openapi`)', () => {
  const committed = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
  assert.equal(committed, openApiJson());
});
