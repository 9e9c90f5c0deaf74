import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  creditorReference,
  findCreditorReferences,
  formatCreditorReference,
  isCreditorReference,
  normalizeCreditorReference,
} from '../src/index.js';

describe('ISO 11649 creditor references', () => {
  test("the standard's example: the reference 539007547034 is RF18 5390 0754 7034", () => {
    assert.equal(creditorReference('539007547034'), 'RF18539007547034');
    assert.equal(formatCreditorReference('RF18539007547034'), 'RF18 5390 0754 7034');
    assert.equal(isCreditorReference('RF18 5390 0754 7034'), true);
    assert.equal(normalizeCreditorReference('rf18 5390 0754 7034'), 'RF18539007547034');
  });

  test('the mod-97 check refuses a changed digit, swapped digits, wrong check digits and bad shapes', () => {
    for (const wrong of [
      'RF18539007547035',
      'RF18539007547304',
      'RF19539007547034',
      'RF00539007547034',
      'RF18',
      'XX18539007547034',
      'RF1853900754703-',
      `RF18${'1'.repeat(22)}`,
      '',
    ]) {
      assert.equal(isCreditorReference(wrong), false, wrong);
    }
  });

  test('every body of 1 to 21 letters and digits makes a valid reference that keeps it', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Z]{1,21}$/), (body) => {
        const reference = creditorReference(body);
        assert.equal(reference.slice(4), body);
        assert.equal(isCreditorReference(reference), true);
        assert.equal(isCreditorReference(formatCreditorReference(reference).toLowerCase()), true);
        // Other check digits are always caught.
        const other = String(((Number(reference.slice(2, 4)) - 2 + 1) % 97) + 2).padStart(2, '0');
        assert.equal(isCreditorReference(`RF${other}${body}`), false);
      }),
    );
    assert.throws(() => creditorReference(''), RangeError);
    assert.throws(() => creditorReference('1'.repeat(22)), RangeError);
    assert.throws(() => creditorReference('AB-12'), RangeError);
  });

  test('found in free text, compared without spaces and case', () => {
    assert.deepEqual(findCreditorReferences('Order rf18 5390 0754 7034, thanks'), ['RF18539007547034']);
    assert.deepEqual(findCreditorReferences('RF18539007547034'), ['RF18539007547034']);
    assert.deepEqual(findCreditorReferences('no reference here'), []);
    assert.deepEqual(findCreditorReferences('RF19 5390 0754 7034'), []);
    const ours = creditorReference('202612010000000123');
    assert.ok(findCreditorReferences(`Invoice ${formatCreditorReference(ours)} / paid by Ana`).includes(ours));
  });
});
