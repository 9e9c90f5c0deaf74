// Content-Digest (RFC 9530, specification: Authentication summary, Webhook authentication): only
// `sha-256=:<canonical base64 of SHA-256 of the exact bytes>:` matches.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { contentDigest, verifyContentDigest } from '@paygate/protocol';
import { withTrailingBitSet } from './support.js';

const body = Buffer.from('{"version":1,"alg":"sealedbox-v1-x25519-xsalsa20poly1305"}', 'utf8');
const sha256 = createHash('sha256').update(body).digest();
const b64 = sha256.toString('base64');
const valid = `sha-256=:${b64}:`;

describe('Content-Digest', () => {
  it('is sha-256 over the exact bytes, in RFC 9530 form', () => {
    assert.equal(contentDigest(body), valid);
    assert.equal(contentDigest(Buffer.alloc(0)), 'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:');
    assert.ok(verifyContentDigest(valid, body));
  });

  const withTrailingBits = withTrailingBitSet(b64);
  it('(fixture) non-canonical base64 that Node decodes to the same digest', () => {
    assert.deepEqual(Buffer.from(withTrailingBits, 'base64'), sha256);
  });

  const flipped = Buffer.from(body);
  flipped[0] = (flipped[0] as number) ^ 1;
  const rows: { rule: string; header: string; bytes?: Buffer }[] = [
    { rule: 'another algorithm (sha-512)', header: `sha-512=:${createHash('sha512').update(body).digest('base64')}:` },
    { rule: 'the sha-256 value under sha-512', header: `sha-512=:${b64}:` },
    { rule: 'the algorithm in uppercase', header: `SHA-256=:${b64}:` },
    { rule: 'the legacy Digest form', header: `SHA-256=${b64}` },
    {
      rule: 'a sha-512 value under sha-256 (wrong length)',
      header: `sha-256=:${createHash('sha512').update(body).digest('base64')}:`,
    },
    { rule: 'a truncated value (wrong length)', header: `sha-256=:${sha256.subarray(0, 31).toString('base64')}:` },
    { rule: 'an empty value', header: 'sha-256=::' },
    { rule: 'hex instead of base64', header: `sha-256=:${sha256.toString('hex')}:` },
    { rule: 'base64 without padding', header: `sha-256=:${b64.replace(/=$/, '')}:` },
    { rule: 'base64 with non-zero trailing bits', header: `sha-256=:${withTrailingBits}:` },
    { rule: 'base64url', header: `sha-256=:${sha256.toString('base64url')}=:` },
    { rule: 'whitespace in the base64', header: `sha-256=:${b64.slice(0, 20)} ${b64.slice(20)}:` },
    { rule: 'whitespace around the value', header: ` ${valid} ` },
    { rule: 'missing colons', header: `sha-256=${b64}` },
    { rule: 'a parameter', header: `${valid};x=1` },
    { rule: 'a second digest', header: `${valid}, sha-512=:${createHash('sha512').update(body).digest('base64')}:` },
    { rule: 'the digest of other bytes (mismatch)', header: valid, bytes: flipped },
    {
      rule: 'the digest of the bytes with one more byte (mismatch)',
      header: valid,
      bytes: Buffer.concat([body, Buffer.from(' ')]),
    },
    { rule: 'the digest of no bytes', header: contentDigest(Buffer.alloc(0)) },
    {
      rule: 'characters beyond Latin-1 whose low byte matches (U+0173 for "s")',
      header: `\u0173${valid.slice(1)}`,
    },
    { rule: 'a lone surrogate in place of a character', header: `${valid.slice(0, 10)}\ud800${valid.slice(11)}` },
  ];
  for (const row of rows) {
    it(`refuses ${row.rule}`, () => {
      assert.equal(verifyContentDigest(row.header, row.bytes ?? body), false);
    });
  }
});
