import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findBadMember, parseStrictJson } from '../src/http/strict-json.js';

// The scanner's tricky inputs: escapes in names and values, brackets and commas inside strings,
// arrays of objects. `undefined` means the text must parse as JSON.parse does.
const ROWS: readonly [string, string | undefined][] = [
  ['{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}', undefined],
  ['{"a":"\\"","b":"\\\\","c":"{\\",:[]}"}', undefined],
  ['{"a\\"b":1,"a\\\\":2,"a":3}', undefined],
  ['{"a":1,"a":2}', 'a'],
  ['{"a":"x\\"","a":2}', 'a'],
  ['{"a\\\\":1,"a\\u005c":2}', 'a\\'],
  ['{"\\u00e9":1,"é":2}', 'é'],
  ['[{"k":1},[{"k":1},{"k":2,"k":3}]]', '1.1.k'],
  ['{"x":[1,[2,3],{"y":{"z":"]}","z":0}}]}', 'x.2.y.z'],
  [' { "a" : 1 , "b" : { } , "a" : 2 } ', 'a'],
  ['{"__proto__":{"admin":true}}', '__proto__'],
  ['{"constructor":{"prototype":{}}}', 'constructor.prototype'],
];

describe('strict JSON', () => {
  for (const [text, path] of ROWS) {
    it(`${text} → ${path ?? 'parsed'}`, () => {
      assert.equal(findBadMember(text)?.path, path);
      if (path === undefined) assert.deepEqual(parseStrictJson(text), JSON.parse(text));
      else assert.throws(() => parseStrictJson(text), { code: 'VALIDATION_FAILED' });
    });
  }
  it('throws SyntaxError for text that is not JSON', () => {
    assert.throws(() => parseStrictJson('{"a":1,}'), SyntaxError);
  });
});
