import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  centsToEur,
  eurToCents,
  isBic,
  isEpcLatin,
  isEpcReference,
  normalizeBic,
  normalizeIban,
  toEpcLatin,
} from '../src/index.js';

describe('normalizeIban', () => {
  test('accepts valid IBANs of several countries as they are', () => {
    for (const iban of [
      'DE89370400440532013000',
      'GB82WEST12345698765432',
      'FR1420041010050500013M02606',
      'NL91ABNA0417164300',
      'BE68539007547034',
      'AT611904300234573201',
      'ES9121000418450200051332',
      'IT60X0542811101000000123456',
    ]) {
      assert.equal(normalizeIban(iban), iban);
    }
  });

  test('drops spaces and upper-cases letters', () => {
    assert.equal(normalizeIban('DE89 3704 0044 0532 0130 00'), 'DE89370400440532013000');
    assert.equal(normalizeIban('  gb82 west 1234 5698 7654 32 '), 'GB82WEST12345698765432');
    assert.equal(normalizeIban('fr14\t2004 1010 0505 0001 3m02 606'), 'FR1420041010050500013M02606');
  });

  test('refuses wrong check digits', () => {
    assert.equal(normalizeIban('DE88370400440532013000'), undefined);
    assert.equal(normalizeIban('GB82WEST12345698765431'), undefined);
  });

  test("refuses a length other than the country's", () => {
    assert.equal(normalizeIban('DE8937040044053201300'), undefined);
    assert.equal(normalizeIban('DE893704004405320130000'), undefined);
    assert.equal(normalizeIban('NL91ABNA041716430'), undefined);
  });

  test('refuses unknown countries, other characters and nothing', () => {
    assert.equal(normalizeIban('XX89370400440532013000'), undefined);
    assert.equal(normalizeIban('DE89-3704-0044-0532-0130-00'), undefined);
    assert.equal(normalizeIban(''), undefined);
    assert.equal(normalizeIban('   '), undefined);
  });
});

describe('isBic', () => {
  test('takes 8 and 11 characters', () => {
    assert.equal(isBic('DEUTDEFF'), true);
    assert.equal(isBic('DEUTDEFF500'), true);
    assert.equal(isBic('ABNANL2A'), true);
    assert.equal(isBic('COBADEFFXXX'), true);
  });

  test('refuses other lengths, lower case, unknown countries and symbols', () => {
    assert.equal(isBic('DEUTDEF'), false);
    assert.equal(isBic('DEUTDEFF5'), false);
    assert.equal(isBic('DEUTDEFF5000'), false);
    assert.equal(isBic('deutdeff'), false);
    assert.equal(isBic('DEUTXXFF'), false);
    assert.equal(isBic('DEUT-EFF'), false);
    assert.equal(isBic(''), false);
  });

  test('normalizeBic upper-cases and drops spaces first', () => {
    assert.equal(normalizeBic(' deut de ff 500'), 'DEUTDEFF500');
    assert.equal(normalizeBic('deutde'), undefined);
  });
});

describe('toEpcLatin', () => {
  const cases: [string, string][] = [
    ['Zoë Ångström & Søn <GmbH>', 'Zoe Angstrom + Son GmbH'],
    ['Müller-Lüdenscheidt', 'Muller-Ludenscheidt'],
    ['Straße', 'Strasse'],
    ['Ærø Œuvre', 'AEro OEuvre'],
    ['Łódź Þór Đorđe', 'Lodz THor Dorde'],
    ['François Señor Čapek Ğ', 'Francois Senor Capek G'],
    ['O’Brien – “quoted”', "O'Brien - quoted"],
    ['a@b#c$d%e', 'a b c d e'],
    ['  tabs\tand\nnewlines  ', 'tabs and newlines'],
    ['ﬁrst ＡＢＣ', 'first ABC'],
    ["Plain / - ? : ( ) . , ' +", "Plain / - ? : ( ) . , ' +"],
    ['東京', ''],
    ['', ''],
  ];
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      const out = toEpcLatin(input);
      assert.equal(out, expected);
      assert.equal(isEpcLatin(out), true);
    });
  }

  test('cuts at 70 characters and trims what the cut leaves', () => {
    const long = `${'a'.repeat(69)} b${'c'.repeat(20)}`;
    assert.equal(toEpcLatin(long), 'a'.repeat(69));
    assert.equal(toEpcLatin('ß'.repeat(40)).length, 70);
  });

  test('its result is always in the set, at most 70 long, and stable', () => {
    for (const input of ['Zoë', '💶 Euro €', 'a\u0000b', 'Ǆ ǅ ǆ', 'Ωμέγα', '\u00a0nbsp\u2003em']) {
      const out = toEpcLatin(input);
      assert.equal(isEpcLatin(out), true, input);
      assert.ok(out.length <= 70);
      assert.equal(toEpcLatin(out), out);
    }
  });
});

describe('isEpcLatin and isEpcReference', () => {
  test('isEpcLatin takes only the basic Latin set', () => {
    assert.equal(isEpcLatin("Az09/-?:().,'+ "), true);
    assert.equal(isEpcLatin(''), true);
    assert.equal(isEpcLatin('é'), false);
    assert.equal(isEpcLatin('&'), false);
    assert.equal(isEpcLatin('a_b'), false);
    assert.equal(isEpcLatin('a\nb'), false);
  });

  test('isEpcReference adds the length and slash rules', () => {
    assert.equal(isEpcReference('W0001'), true);
    assert.equal(isEpcReference('a'.repeat(35)), true);
    assert.equal(isEpcReference('a'.repeat(36)), false);
    assert.equal(isEpcReference(''), false);
    assert.equal(isEpcReference('/W1'), false);
    assert.equal(isEpcReference('W1/'), false);
    assert.equal(isEpcReference('W//1'), false);
    assert.equal(isEpcReference(' W1'), false);
  });
});

describe('EUR amounts', () => {
  test('eurToCents reads at most 2 decimals exactly', () => {
    assert.equal(eurToCents('12.30'), 1230);
    assert.equal(eurToCents('12.3'), 1230);
    assert.equal(eurToCents('12'), 1200);
    assert.equal(eurToCents('0.01'), 1);
    assert.equal(eurToCents('999999999.99'), 99_999_999_999);
  });

  test('eurToCents refuses anything else', () => {
    for (const bad of ['', '.5', '1.', '1.234', '-1', '+1', '1e3', '01', ' 1', '1,00', 'NaN', '0x10']) {
      assert.equal(eurToCents(bad), undefined, bad);
    }
  });

  test('centsToEur writes two decimals', () => {
    assert.equal(centsToEur(1), '0.01');
    assert.equal(centsToEur(30), '0.30');
    assert.equal(centsToEur(1230), '12.30');
    assert.equal(centsToEur(0), '0.00');
    assert.throws(() => centsToEur(1.5));
  });
});
