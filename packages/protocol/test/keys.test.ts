// Key loading (specification: Authentication, Signature base item 5; merchant credentials): every
// accepted form yields the same key; every other input is refused with a typed KeyError.
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import sodium from 'sodium-native';
import {
  boxKeyPairFrom,
  boxPublicKeyFrom,
  publicKeyFrom,
  seedOf,
  sign,
  signingKeyFrom,
  signingKeyToPem,
  verify,
} from '@paygate/protocol';
import { assertRefused, merchantKey, otherMerchantKey, unwrap, withTrailingBitSet } from './support.js';

const seed = seedOf(merchantKey);
const full = Buffer.from(merchantKey.secretKey);
const { privateKeyPem, publicKeyPem } = signingKeyToPem(merchantKey);
const x25519 = generateKeyPairSync('x25519');
const x25519PrivatePem = x25519.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const x25519PublicPem = x25519.publicKey.export({ format: 'pem', type: 'spki' }).toString();
const encryptedPem = createPrivateKey(privateKeyPem)
  .export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' })
  .toString();
const hex = (text: string) => Buffer.from(text, 'hex');
/** Ed25519 points of small order (libsodium's blocklist), as public keys. */
const SMALL_ORDER_POINTS = [
  { name: 'the identity (order 1)', bytes: hex('0100000000000000000000000000000000000000000000000000000000000000') },
  { name: 'order 4, y = 0', bytes: hex('0000000000000000000000000000000000000000000000000000000000000000') },
  { name: 'order 2, y = -1', bytes: hex('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f') },
  { name: 'order 8', bytes: hex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05') },
  { name: 'order 8, the other one', bytes: hex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a') },
];

function mixedOrderPoint(): Buffer {
  const sum = Buffer.alloc(32);
  sodium.crypto_core_ed25519_add(sum, merchantKey.publicKey, SMALL_ORDER_POINTS[3]?.bytes as Buffer);
  return sum;
}

describe('signingKeyFrom accepts', () => {
  const forms: { form: string; input: string | Uint8Array }[] = [
    { form: 'a 32-byte seed', input: seed },
    { form: 'a 32-byte seed as a Uint8Array view', input: new Uint8Array(seed) },
    { form: 'a 64-byte libsodium key', input: full },
    { form: 'a 32-byte seed in base64', input: seed.toString('base64') },
    { form: 'a 64-byte key in base64, with a trailing newline', input: `${full.toString('base64')}\n` },
    { form: 'a PEM PKCS#8 private key', input: privateKeyPem },
    { form: 'a PEM PKCS#8 private key with CRLF line ends', input: privateKeyPem.replace(/\n/g, '\r\n') },
  ];
  for (const { form, input } of forms) {
    it(form, () => {
      const key = unwrap(signingKeyFrom(input));
      assert.deepEqual(key.publicKey, merchantKey.publicKey);
      assert.deepEqual(Buffer.from(key.secretKey), full);
      assert.ok(verify('m', sign('m', key), merchantKey.publicKey));
    });
  }
});

describe('signingKeyFrom refuses', () => {
  const mismatched = Buffer.concat([seed, otherMerchantKey.publicKey]);
  const rows: { rule: string; input: string | Uint8Array; reason: RegExp }[] = [
    { rule: 'no bytes', input: Buffer.alloc(0), reason: /32 or 64 bytes, not 0/ },
    { rule: '31 bytes', input: seed.subarray(1), reason: /32 or 64 bytes, not 31/ },
    { rule: '33 bytes', input: Buffer.concat([seed, Buffer.from([0])]), reason: /32 or 64 bytes, not 33/ },
    { rule: '63 bytes', input: full.subarray(1), reason: /not 63/ },
    { rule: '65 bytes', input: Buffer.concat([full, Buffer.from([0])]), reason: /not 65/ },
    { rule: 'a 64-byte key whose public half is another key', input: mismatched, reason: /does not match its seed/ },
    { rule: 'a 48-byte key in base64', input: Buffer.alloc(48, 1).toString('base64'), reason: /not 48/ },
    {
      rule: 'garbage PEM',
      input: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n',
      reason: /could not be parsed/,
    },
    { rule: 'a PEM header alone', input: '-----BEGIN PRIVATE KEY-----', reason: /could not be parsed/ },
    { rule: 'a PEM public key', input: publicKeyPem, reason: /could not be parsed/ },
    { rule: 'an X25519 PEM private key', input: x25519PrivatePem, reason: /not an Ed25519 key/ },
    { rule: 'an encrypted PEM private key', input: encryptedPem, reason: /could not be parsed/ },
    { rule: 'base64url', input: seed.toString('base64url'), reason: /neither PEM nor canonical base64/ },
    { rule: 'base64 without padding', input: seed.toString('base64').replace(/=+$/, ''), reason: /neither PEM nor/ },
    {
      rule: 'base64 with non-zero trailing bits',
      input: withTrailingBitSet(seed.toString('base64')),
      reason: /neither PEM nor/,
    },
    {
      rule: 'whitespace inside base64',
      input: `${seed.toString('base64').slice(0, 8)} ${seed.toString('base64').slice(8)}`,
      reason: /neither PEM nor/,
    },
    { rule: 'hex', input: seed.toString('hex'), reason: /not 48|neither PEM nor/ },
    { rule: 'an empty string', input: '', reason: /not 0/ },
  ];
  for (const row of rows) {
    it(row.rule, () => assertRefused(signingKeyFrom(row.input), 'invalid-key', row.reason));
  }
});

describe('publicKeyFrom accepts', () => {
  const forms: { form: string; input: string | Uint8Array }[] = [
    { form: 'raw 32 bytes', input: merchantKey.publicKey },
    { form: 'raw 32 bytes in base64', input: merchantKey.publicKey.toString('base64') },
    { form: 'a PEM SPKI public key', input: publicKeyPem },
    { form: 'a PEM SPKI public key with surrounding whitespace', input: `\n  ${publicKeyPem}\n` },
  ];
  for (const { form, input } of forms) {
    it(form, () => assert.deepEqual(unwrap(publicKeyFrom(input)), merchantKey.publicKey));
  }
});

describe('publicKeyFrom refuses', () => {
  const rows: { rule: string; input: string | Uint8Array; reason: RegExp }[] = [
    { rule: '31 bytes', input: merchantKey.publicKey.subarray(1), reason: /32 bytes, not 31/ },
    { rule: '33 bytes', input: Buffer.concat([merchantKey.publicKey, Buffer.from([0])]), reason: /32 bytes, not 33/ },
    { rule: 'a 64-byte private key', input: full, reason: /32 bytes, not 64/ },
    { rule: 'a 64-byte private key in base64', input: full.toString('base64'), reason: /32 bytes, not 64/ },
    ...SMALL_ORDER_POINTS.map(({ name, bytes }) => ({
      rule: `a small-order point: ${name}`,
      input: bytes as string | Uint8Array,
      reason: /not a valid Ed25519 point/,
    })),
    {
      rule: 'a small-order point in base64',
      input: SMALL_ORDER_POINTS[3]?.bytes.toString('base64') as string,
      reason: /not a valid Ed25519 point/,
    },
    {
      rule: 'a point with a small-order component (not in the prime-order subgroup)',
      input: mixedOrderPoint(),
      reason: /not a valid Ed25519 point/,
    },
    {
      rule: 'a non-canonical encoding (y = p)',
      input: hex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      reason: /not a valid Ed25519 point/,
    },
    {
      rule: 'a non-canonical encoding (y = p + 1)',
      input: hex('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      reason: /not a valid Ed25519 point/,
    },
    {
      rule: 'garbage PEM',
      input: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n',
      reason: /could not be parsed/,
    },
    { rule: 'an X25519 PEM public key', input: x25519PublicPem, reason: /not an Ed25519 key/ },
    { rule: 'a PEM private key (the platform must never take one)', input: privateKeyPem, reason: /not a PUBLIC KEY/ },
    {
      rule: 'base64url',
      input: merchantKey.publicKey.toString('base64url'),
      reason: /neither PEM nor canonical base64/,
    },
    { rule: 'an empty string', input: '', reason: /32 bytes, not 0/ },
  ];
  for (const row of rows) {
    it(row.rule, () => assertRefused(publicKeyFrom(row.input), 'invalid-key', row.reason));
  }
});

describe('X25519 body keys', () => {
  const box = unwrap(boxKeyPairFrom(Buffer.alloc(32, 7)));

  it('boxKeyPairFrom derives the public key; boxPublicKeyFrom takes raw bytes and base64', () => {
    const derived = Buffer.alloc(32);
    sodium.crypto_scalarmult_base(derived, Buffer.alloc(32, 7));
    assert.deepEqual(box.publicKey, derived);
    assert.deepEqual(unwrap(boxPublicKeyFrom(box.publicKey)), box.publicKey);
    assert.deepEqual(unwrap(boxPublicKeyFrom(box.publicKey.toString('base64'))), box.publicKey);
  });

  const publicRows: { rule: string; input: string | Uint8Array; reason: RegExp }[] = [
    { rule: '31 bytes', input: box.publicKey.subarray(1), reason: /32 bytes/ },
    { rule: '33 bytes in base64', input: Buffer.alloc(33, 9).toString('base64'), reason: /32 bytes/ },
    { rule: 'base64url', input: box.publicKey.toString('base64url'), reason: /32 bytes of canonical base64/ },
    { rule: 'a small-order point: 0', input: Buffer.alloc(32), reason: /small-order/ },
    {
      rule: 'a small-order point: 1',
      input: hex('0100000000000000000000000000000000000000000000000000000000000000'),
      reason: /small-order/,
    },
    {
      rule: 'a small-order point of order 8',
      input: hex('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800'),
      reason: /small-order/,
    },
    {
      rule: 'a small-order point p - 1',
      input: hex('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      reason: /small-order/,
    },
  ];
  for (const row of publicRows) {
    it(`boxPublicKeyFrom refuses ${row.rule}`, () =>
      assertRefused(boxPublicKeyFrom(row.input), 'invalid-key', row.reason));
  }

  for (const length of [0, 31, 33, 64]) {
    it(`boxKeyPairFrom refuses a ${length}-byte secret key`, () =>
      assertRefused(boxKeyPairFrom(Buffer.alloc(length, 1)), 'invalid-key', new RegExp(`not ${length}`)));
  }
});
