import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BrCodeError, buildBrCode, crc16, parseBrCode, parseTlv, tlv } from '../src/index.js';

/** The static QR code example of the BCB's "Manual de Padrões para Iniciação do Pix". */
const MANUAL_STATIC =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';

/** `pixCopiaECola` examples of the API Pix document 2.9.0 (components.examples, recurrence answers). */
const API_DYNAMIC_COB =
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd4415204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/94ed2badcbc04c15b0bb7fa35319489063047741';
const API_DYNAMIC_COBV =
  '00020101021226810014br.gov.bcb.pix2559pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e75204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/3ffa640fa4f14080adccb949fa2dc0d06304A441';
const API_RECURRENCE_ONLY =
  '00020126180014br.gov.bcb.pix5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002630462C9';

describe('crc16', () => {
  test('is CRC-16/CCITT-FALSE: the catalogue check value of "123456789" is 29B1', () => {
    assert.equal(crc16('123456789'), '29B1');
  });

  test('pads to four upper-case digits', () => {
    assert.match(crc16(''), /^[0-9A-F]{4}$/);
    assert.equal(crc16(''), 'FFFF');
  });
});

describe('buildBrCode', () => {
  test("reproduces the BCB manual's static example byte for byte", () => {
    const code = buildBrCode({
      account: { kind: 'key', key: '123e4567-e12b-12d1-a456-426655440000' },
      merchantName: 'Fulano de Tal',
      merchantCity: 'BRASILIA',
    });
    assert.equal(code, MANUAL_STATIC);
  });

  test('a dynamic charge: URL location without scheme, one-time, amount, *** as txid', () => {
    const code = buildBrCode({
      account: { kind: 'url', url: 'https://127.0.0.1:9200/qr/v2/7978c0c97ea847e78e8849634473c1f1' },
      amount: '37.00',
      merchantName: 'Loja São João',
      merchantCity: 'São Paulo',
      oneTime: true,
    });
    assert.ok(code.startsWith('000201010212'), code);
    const parsed = parseBrCode(code);
    assert.deepEqual(parsed.account, { kind: 'url', url: '127.0.0.1:9200/qr/v2/7978c0c97ea847e78e8849634473c1f1' });
    assert.equal(parsed.amount, '37.00');
    assert.equal(parsed.merchantName, 'Loja Sao Joao');
    assert.equal(parsed.merchantCity, 'Sao Paulo');
    assert.equal(parsed.pointOfInitiation, '12');
    assert.equal(parsed.txid, '***');
    assert.equal(parsed.crc, code.slice(-4));
    assert.equal(crc16(code.slice(0, -4)), code.slice(-4));
  });

  test('a static code carries a short txid in 62/05', () => {
    const parsed = parseBrCode(
      buildBrCode({
        account: { kind: 'key', key: 'loja@example.com', description: 'pedido 42' },
        amount: '10.50',
        merchantName: 'Loja',
        merchantCity: 'Recife',
        txid: 'PEDIDO42',
      }),
    );
    assert.deepEqual(parsed.account, { kind: 'key', key: 'loja@example.com', description: 'pedido 42' });
    assert.equal(parsed.txid, 'PEDIDO42');
  });

  test('refuses what the standard does not allow, with a clear message', () => {
    const base = { account: { kind: 'key', key: 'k' } as const, merchantName: 'Loja', merchantCity: 'Recife' };
    assert.throws(() => buildBrCode({ ...base, amount: '10.5' }), /amount "10.5"/);
    assert.throws(() => buildBrCode({ ...base, merchantName: 'A'.repeat(26) }), /merchantName is more than 25/);
    assert.throws(() => buildBrCode({ ...base, merchantCity: 'Cidade muito comprida' }), /merchantCity/);
    assert.throws(() => buildBrCode({ ...base, merchantName: '北京' }), /printable ASCII/);
    assert.throws(() => buildBrCode({ ...base, txid: 'a'.repeat(26) }), /62\/05/);
    assert.throws(() => buildBrCode({ ...base, account: { kind: 'url', url: 'x'.repeat(90) } }), /more than 99/);
  });

  test('property: every built code parses back to what was put in, and its CRC checks', () => {
    const text = (max: number) =>
      fc
        .stringMatching(new RegExp(`^[A-Za-z0-9][A-Za-z0-9 .-]{0,${max - 2}}[A-Za-z0-9]$`))
        .filter((s) => s.length <= max);
    fc.assert(
      fc.property(
        fc.record({
          key: fc.stringMatching(/^[a-z0-9@.+-]{1,77}$/),
          amount: fc.option(fc.stringMatching(/^[1-9]\d{0,9}\.\d{2}$/), { nil: undefined }),
          name: text(25),
          city: text(15),
          txid: fc.option(fc.stringMatching(/^[a-zA-Z0-9]{1,25}$/), { nil: undefined }),
        }),
        ({ key, amount, name, city, txid }) => {
          const code = buildBrCode({
            account: { kind: 'key', key },
            merchantName: name,
            merchantCity: city,
            ...(amount !== undefined ? { amount } : {}),
            ...(txid !== undefined ? { txid } : {}),
          });
          const parsed = parseBrCode(code);
          assert.deepEqual(parsed.account, { kind: 'key', key });
          assert.equal(parsed.amount, amount);
          assert.equal(parsed.merchantName, name);
          assert.equal(parsed.merchantCity, city);
          assert.equal(parsed.txid, txid ?? '***');
        },
      ),
    );
  });
});

describe('parseBrCode', () => {
  test("reads the manual's static example", () => {
    const parsed = parseBrCode(MANUAL_STATIC);
    assert.deepEqual(parsed.account, { kind: 'key', key: '123e4567-e12b-12d1-a456-426655440000' });
    assert.equal(parsed.merchantCategoryCode, '0000');
    assert.equal(parsed.currency, '986');
    assert.equal(parsed.countryCode, 'BR');
    assert.equal(parsed.merchantName, 'Fulano de Tal');
    assert.equal(parsed.merchantCity, 'BRASILIA');
    assert.equal(parsed.txid, '***');
    assert.equal(parsed.amount, undefined);
    assert.equal(parsed.crc, '1D3D');
  });

  test("reads the API Pix document's dynamic examples, keeping fields it does not interpret (80)", () => {
    const cob = parseBrCode(API_DYNAMIC_COB);
    assert.deepEqual(cob.account, { kind: 'url', url: 'pix.example.com/qr/v2/8b3da2f39a4140d1a91abd93113bd441' });
    assert.equal(cob.pointOfInitiation, '12');
    assert.ok(cob.fields.some((field) => field.id === '80'));
    const cobv = parseBrCode(API_DYNAMIC_COBV);
    assert.deepEqual(cobv.account, {
      kind: 'url',
      url: 'pix.example.com/qr/v2/cobv/1e6c54d3ec9449b7a7fc53b6b0f998e7',
    });
  });

  test("a recurrence-only code (the document's JORNADA_2 example) has a right CRC but no charge to pay", () => {
    assert.equal(crc16(API_RECURRENCE_ONLY.slice(0, -4)), API_RECURRENCE_ONLY.slice(-4));
    assert.throws(() => parseBrCode(API_RECURRENCE_ONLY), /neither a key \(01\) nor a URL \(25\)/);
  });

  test('any changed character breaks the CRC', () => {
    for (let at = 0; at < MANUAL_STATIC.length - 4; at++) {
      const original = MANUAL_STATIC[at] as string;
      const changed = original === 'x' ? 'y' : 'x';
      const tampered = MANUAL_STATIC.slice(0, at) + changed + MANUAL_STATIC.slice(at + 1);
      assert.throws(() => parseBrCode(tampered), BrCodeError, `position ${at}`);
    }
    assert.throws(() => parseBrCode(`${MANUAL_STATIC.slice(0, -4)}1D3E`), /CRC mismatch/);
  });

  test('refuses malformed codes with a reason', () => {
    const withCrc = (body: string) => `${body}6304${crc16(`${body}6304`)}`;
    assert.throws(() => parseBrCode(MANUAL_STATIC.slice(0, -6)), /declares|field 63|malformed/);
    assert.throws(() => parseBrCode('hello'), /malformed field header/);
    assert.throws(() => parseBrCode(withCrc('000201')), /no merchant account/);
    assert.throws(() => parseBrCode(withCrc('000202')), /field 00/);
    const noGui = `${tlv('00', '01')}${tlv('26', tlv('00', 'com.example') + tlv('01', 'k'))}`;
    assert.throws(() => parseBrCode(withCrc(noGui)), /GUI br\.gov\.bcb\.pix/);
    const usd = `${tlv('00', '01')}${tlv('26', tlv('00', 'br.gov.bcb.pix') + tlv('01', 'k'))}${tlv('52', '0000')}${tlv('53', '840')}`;
    assert.throws(() => parseBrCode(withCrc(usd)), /currency\) is 840/);
  });

  test('parseTlv splits fields in order', () => {
    assert.deepEqual(parseTlv('000201' + '5303986'), [
      { id: '00', value: '01' },
      { id: '53', value: '986' },
    ]);
  });
});
