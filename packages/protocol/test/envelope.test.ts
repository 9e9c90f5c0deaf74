// The sealed-box envelope (specification: Resources, Sealed-box envelope; Body encryption rules;
// Limits): exactly four members, strict JSON, canonical base64, and a box that opens.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sodium from 'sodium-native';
import {
  ENVELOPE_ALG,
  MAX_PLAINTEXT_BYTES,
  MAX_WIRE_BODY_BYTES,
  openEnvelope,
  openSealedBox,
  parseEnvelope,
  sealEnvelope,
} from '@paygate/protocol';
import { assertRefused, BODY_KEY_ID, bodyKey, otherBodyKey, PLAINTEXT, unwrap, withTrailingBitSet } from './support.js';

const bodyPublicKey = { keyId: BODY_KEY_ID, publicKey: bodyKey.publicKey };

// Parsing does not open the box, so fixed bytes do; 0xfb repeated encodes as "+/v7", which
// exercises both characters that base64url replaces. 65 bytes leave one padding character.
const FIXED_BOX = Buffer.alloc(65, 0xfb);
const FIXED_B64 = FIXED_BOX.toString('base64');

type Members = [name: string, json: string][];
const VALID_MEMBERS: Members = [
  ['version', '1'],
  ['alg', JSON.stringify(ENVELOPE_ALG)],
  ['keyId', JSON.stringify(BODY_KEY_ID)],
  ['ciphertext', JSON.stringify(FIXED_B64)],
];
const objectOf = (members: Members) =>
  `{${members.map(([name, json]) => `${JSON.stringify(name)}:${json}`).join(',')}}`;
const VALID = objectOf(VALID_MEMBERS);
/** The valid envelope with one member's JSON text replaced. */
const withMember = (name: string, json: string) =>
  objectOf(VALID_MEMBERS.map(([key, value]): [string, string] => [key, key === name ? json : value]));
const withCiphertext = (text: string) => withMember('ciphertext', JSON.stringify(text));

describe('parseEnvelope accepts', () => {
  const forms: { form: string; body: string }[] = [
    { form: 'the four members', body: VALID },
    { form: 'the members in another order', body: objectOf([...VALID_MEMBERS].reverse()) },
    {
      form: 'JSON whitespace around and between tokens',
      body: `\r\n\t { "version" : 1 ,\n${VALID.slice('{"version":1,'.length, -1)} }\n`,
    },
    { form: 'JSON escapes in strings', body: withMember('keyId', '"body-2026\\u002d01"') },
  ];
  for (const { form, body } of forms) {
    it(form, () => {
      const envelope = unwrap(parseEnvelope(Buffer.from(body, 'utf8'), ENVELOPE_ALG));
      assert.deepEqual(envelope, { version: 1, alg: ENVELOPE_ALG, keyId: BODY_KEY_ID, ciphertext: FIXED_BOX });
    });
  }
});

interface Row {
  readonly rule: string;
  readonly body: string | Buffer;
  readonly contentEncryption?: string;
  readonly reason: RegExp;
}

const rows: Row[] = [
  // exactly four members
  {
    rule: 'an unknown fifth member',
    body: objectOf([...VALID_MEMBERS, ['nonce', '"abc"']]),
    reason: /exactly version, alg, keyId and ciphertext/,
  },
  {
    rule: 'a member missing (keyId)',
    body: objectOf(VALID_MEMBERS.filter(([name]) => name !== 'keyId')),
    reason: /exactly/,
  },
  { rule: 'a member missing (version)', body: objectOf(VALID_MEMBERS.slice(1)), reason: /exactly/ },
  {
    rule: 'an unknown member in place of a known one',
    body: objectOf(VALID_MEMBERS.map(([name, json]): [string, string] => [name === 'keyId' ? 'keyid' : name, json])),
    reason: /exactly/,
  },
  { rule: 'no members', body: '{}', reason: /exactly/ },
  // duplicates
  {
    rule: 'a member repeated with another value',
    body: objectOf([...VALID_MEMBERS, ['keyId', '"other"']]),
    reason: /duplicate member keyId/,
  },
  {
    rule: 'a member repeated with the same value',
    body: objectOf([VALID_MEMBERS[0] as [string, string], ...VALID_MEMBERS]),
    reason: /duplicate member version/,
  },
  {
    rule: 'a duplicate spelled with an escape',
    body: `{"vers\\u0069on":1,${VALID.slice(1)}`,
    reason: /duplicate member version/,
  },
  // surrounding content
  { rule: 'trailing text', body: `${VALID}x`, reason: /trailing content/ },
  { rule: 'a second object', body: `${VALID}{}`, reason: /trailing content/ },
  { rule: 'a trailing comma after the object', body: `${VALID},`, reason: /trailing content/ },
  { rule: 'a trailing NUL', body: `${VALID}\u0000`, reason: /trailing content/ },
  { rule: 'trailing non-JSON whitespace (NBSP)', body: `${VALID}\u00a0`, reason: /trailing content/ },
  {
    rule: 'a leading UTF-8 byte order mark',
    body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(VALID)]),
    reason: /not a JSON object/,
  },
  { rule: 'an array', body: `[${VALID}]`, reason: /not a JSON object/ },
  { rule: 'a JSON string', body: JSON.stringify(VALID), reason: /not a JSON object/ },
  { rule: 'an empty body', body: '', reason: /not a JSON object/ },
  { rule: 'null', body: 'null', reason: /not a JSON object/ },
  // JSON syntax
  { rule: 'a trailing comma inside the object', body: `${VALID.slice(0, -1)},}`, reason: /expected a member name/ },
  { rule: 'a missing comma', body: VALID.replace(',"alg"', ' "alg"'), reason: /expected the end of the object/ },
  { rule: 'a missing colon', body: VALID.replace('"version":', '"version" '), reason: /expected a colon/ },
  { rule: 'single-quoted names', body: VALID.replace('"version"', "'version'"), reason: /expected a member name/ },
  { rule: 'an unterminated object', body: VALID.slice(0, -1), reason: /expected the end of the object/ },
  {
    rule: 'a raw control character in a string',
    body: withMember('keyId', '"body\n1"'),
    reason: /member keyId is not a string or an integer/,
  },
  {
    rule: 'an invalid escape',
    body: withMember('keyId', '"body\\x31"'),
    reason: /member keyId is not a string or an integer/,
  },
  {
    rule: 'bytes that are not UTF-8',
    body: Buffer.from(withMember('keyId', '"body-\u00ff"'), 'latin1'),
    reason: /not UTF-8/,
  },
  {
    rule: 'an overlong UTF-8 encoding',
    body: Buffer.concat([Buffer.from(VALID.slice(0, -1)), Buffer.from([0xc0, 0xbd])]),
    reason: /not UTF-8/,
  },
  // version: the integer 1 only
  { rule: 'version 1.0', body: withMember('version', '1.0'), reason: /member version is not a string or an integer/ },
  { rule: 'version 1e0', body: withMember('version', '1e0'), reason: /member version is not a string or an integer/ },
  { rule: 'version 01', body: withMember('version', '01'), reason: /member version is not a string or an integer/ },
  { rule: 'version "1"', body: withMember('version', '"1"'), reason: /version must be 1/ },
  { rule: 'version 2', body: withMember('version', '2'), reason: /version must be 1/ },
  { rule: 'version 0', body: withMember('version', '0'), reason: /version must be 1/ },
  { rule: 'version -1', body: withMember('version', '-1'), reason: /version must be 1/ },
  { rule: 'version 10', body: withMember('version', '10'), reason: /version must be 1/ },
  { rule: 'version true', body: withMember('version', 'true'), reason: /member version is not a string or an integer/ },
  { rule: 'version null', body: withMember('version', 'null'), reason: /member version is not a string or an integer/ },
  { rule: 'version [1]', body: withMember('version', '[1]'), reason: /member version is not a string or an integer/ },
  {
    rule: 'version as an object',
    body: withMember('version', '{"major":1}'),
    reason: /member version is not a string or an integer/,
  },
  // alg
  {
    rule: 'alg of another scheme',
    body: withMember('alg', '"sealedbox-v2-x25519-xchacha20poly1305"'),
    reason: /unknown alg/,
  },
  {
    rule: 'alg in uppercase',
    body: withMember('alg', JSON.stringify(ENVELOPE_ALG.toUpperCase())),
    reason: /unknown alg/,
  },
  { rule: 'alg as an integer', body: withMember('alg', '1'), reason: /unknown alg/ },
  {
    rule: 'alg not equal to the Content-Encryption header',
    body: VALID,
    contentEncryption: 'sealedbox-v2-x25519-xchacha20poly1305',
    reason: /alg differs from Content-Encryption/,
  },
  {
    rule: 'a Content-Encryption header in uppercase',
    body: VALID,
    contentEncryption: ENVELOPE_ALG.toUpperCase(),
    reason: /alg differs from Content-Encryption/,
  },
  {
    rule: 'an empty Content-Encryption header',
    body: VALID,
    contentEncryption: '',
    reason: /alg differs from Content-Encryption/,
  },
  // keyId
  { rule: 'keyId empty', body: withMember('keyId', '""'), reason: /keyId must be a non-empty string/ },
  { rule: 'keyId as an integer', body: withMember('keyId', '7'), reason: /keyId must be a non-empty string/ },
  // ciphertext: canonical standard base64 of at least a sealed box
  {
    rule: 'ciphertext in base64url',
    body: withCiphertext(FIXED_BOX.toString('base64url')),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext in base64url with padding',
    body: withCiphertext(FIXED_B64.replace(/\+/g, '-').replace(/\//g, '_')),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with a space',
    body: withCiphertext(`${FIXED_B64.slice(0, 8)} ${FIXED_B64.slice(8)}`),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with a line break (escaped)',
    body: withCiphertext(`${FIXED_B64.slice(0, 76)}\n${FIXED_B64.slice(76)}`),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with a trailing space',
    body: withCiphertext(`${FIXED_B64} `),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext without its padding',
    body: withCiphertext(FIXED_B64.replace(/=+$/, '')),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with extra padding',
    body: withCiphertext(`${FIXED_B64}=`),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with padding in the middle',
    body: withCiphertext(`${FIXED_B64.slice(0, 4)}=${FIXED_B64.slice(5)}`),
    reason: /not canonical standard base64/,
  },
  {
    rule: 'ciphertext with non-zero trailing bits',
    body: withCiphertext(withTrailingBitSet(FIXED_B64)),
    reason: /not canonical standard base64/,
  },
  { rule: 'ciphertext as an integer', body: withMember('ciphertext', '12'), reason: /ciphertext must be a string/ },
  { rule: 'ciphertext empty', body: withCiphertext(''), reason: /shorter than a sealed box/ },
  {
    rule: 'ciphertext of 47 bytes',
    body: withCiphertext(Buffer.alloc(47, 1).toString('base64')),
    reason: /shorter than a sealed box/,
  },
  // size
  {
    rule: 'a wire body over 2 MiB',
    body: `${VALID}${' '.repeat(MAX_WIRE_BODY_BYTES + 1 - VALID.length)}`,
    reason: /wire body exceeds 2 MiB/,
  },
];

describe('parseEnvelope refuses', () => {
  for (const row of rows) {
    it(row.rule, () => {
      const body = typeof row.body === 'string' ? Buffer.from(row.body, 'utf8') : row.body;
      assertRefused(parseEnvelope(body, row.contentEncryption ?? ENVELOPE_ALG), 'invalid-envelope', row.reason);
    });
  }

  it('(boundary) accepts a wire body of exactly 2 MiB', () => {
    const body = Buffer.from(`${VALID}${' '.repeat(MAX_WIRE_BODY_BYTES - VALID.length)}`);
    assert.equal(body.length, MAX_WIRE_BODY_BYTES);
    assert.ok(parseEnvelope(body, ENVELOPE_ALG).ok);
  });
});

describe('sealEnvelope and openEnvelope', () => {
  const wire = unwrap(sealEnvelope(PLAINTEXT, bodyPublicKey));
  const envelope = unwrap(parseEnvelope(wire, ENVELOPE_ALG));
  const lookup = (keyId: string) => (keyId === BODY_KEY_ID ? bodyKey : undefined);

  it('seals to a parseable envelope that opens to the plaintext, differently every time', () => {
    assert.deepEqual(unwrap(openEnvelope(envelope, lookup)), PLAINTEXT);
    assert.equal(envelope.ciphertext.length, PLAINTEXT.length + sodium.crypto_box_SEALBYTES);
    assert.notDeepEqual(unwrap(sealEnvelope(PLAINTEXT, bodyPublicKey)), wire);
  });

  it('serializes the four members in the specified order, nothing else', () => {
    assert.deepEqual(Object.keys(JSON.parse(wire.toString('utf8')) as object), [
      'version',
      'alg',
      'keyId',
      'ciphertext',
    ]);
  });

  it('(boundary) seals a plaintext of exactly 1 MiB', () => {
    assert.ok(sealEnvelope(Buffer.alloc(MAX_PLAINTEXT_BYTES, 0x20), bodyPublicKey).ok);
  });

  const sealRows: { rule: string; plaintext: Buffer; publicKey: Buffer; reason: RegExp }[] = [
    {
      rule: 'a plaintext over 1 MiB',
      plaintext: Buffer.alloc(MAX_PLAINTEXT_BYTES + 1, 0x20),
      publicKey: bodyKey.publicKey,
      reason: /plaintext exceeds 1 MiB/,
    },
    {
      rule: 'a 31-byte body key',
      plaintext: PLAINTEXT,
      publicKey: bodyKey.publicKey.subarray(1),
      reason: /not 32 bytes/,
    },
    { rule: 'a small-order body key', plaintext: PLAINTEXT, publicKey: Buffer.alloc(32), reason: /small-order/ },
  ];
  for (const row of sealRows) {
    it(`sealEnvelope refuses ${row.rule}`, () => {
      assertRefused(
        sealEnvelope(row.plaintext, { keyId: BODY_KEY_ID, publicKey: row.publicKey }),
        'invalid-envelope',
        row.reason,
      );
    });
  }

  const flip = (index: number) => {
    const ciphertext = Buffer.from(envelope.ciphertext);
    ciphertext[index] = (ciphertext[index] as number) ^ 0x01;
    return { ...envelope, ciphertext };
  };
  const openRows: { rule: string; envelope: typeof envelope; reason: RegExp }[] = [
    {
      rule: 'an unknown keyId (the lookup returns undefined)',
      envelope: { ...envelope, keyId: 'retired-key' },
      reason: /unknown keyId/,
    },
    { rule: 'a flipped bit in the ephemeral public key', envelope: flip(0), reason: /does not open/ },
    { rule: 'a flipped bit in the tag', envelope: flip(sodium.crypto_box_PUBLICKEYBYTES + 1), reason: /does not open/ },
    { rule: 'a flipped bit in the last byte', envelope: flip(envelope.ciphertext.length - 1), reason: /does not open/ },
    {
      rule: 'one byte cut off',
      envelope: { ...envelope, ciphertext: envelope.ciphertext.subarray(0, -1) },
      reason: /does not open/,
    },
    { rule: 'a box of fixed bytes', envelope: { ...envelope, ciphertext: FIXED_BOX }, reason: /does not open/ },
  ];
  for (const row of openRows) {
    it(`openEnvelope refuses ${row.rule}`, () => {
      assertRefused(openEnvelope(row.envelope, lookup), 'invalid-envelope', row.reason);
    });
  }

  it('openEnvelope refuses a box sealed to another body key under the same keyId', () => {
    assertRefused(
      openEnvelope(envelope, () => otherBodyKey),
      'invalid-envelope',
      /does not open/,
    );
  });

  it('openSealedBox returns undefined for a box shorter than its overhead', () => {
    assert.equal(openSealedBox(Buffer.alloc(sodium.crypto_box_SEALBYTES - 1), bodyKey), undefined);
  });
});
