/**
 * The pure-JavaScript implementation (noble) against libsodium (sodium-native) and the shared
 * vectors: the same keys, signatures and verdicts, sealed boxes that open either way, and the
 * same refusals of small-order and non-canonical points. Then the protocol and the SDK's vector
 * suites again in a child process where `sodium-native` cannot be loaded.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ED25519_TORSION_SUBGROUP } from '@noble/curves/ed25519.js';
import { pureSodium, sodium } from '../src/sodium.js';
import { vectors } from './vectors.js';

const b64 = (text: string) => Buffer.from(text, 'base64');
const native = sodium;
const pure = pureSodium;
const root = join(import.meta.dirname, '../../..');

// The order of the Ed25519 base point: S + L is the non-canonical twin of a valid S.
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
function addOrderToS(signature: Buffer): Buffer {
  const s = signature.subarray(32);
  let value = 0n;
  for (let i = 31; i >= 0; i--) value = (value << 8n) | BigInt(s[i] as number);
  value += L;
  const out = Buffer.from(signature);
  for (let i = 0; i < 32; i++) {
    out[32 + i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return out;
}

describe('pure-JavaScript sodium against sodium-native', () => {
  it('runs natively here, so the comparison means something', () => {
    assert.equal(native.name, 'sodium-native');
    assert.equal(pure.name, 'noble');
  });

  it('derives the vectors’ Ed25519 keys and reproduces their signatures byte for byte', () => {
    for (const key of [vectors.keys.merchant, vectors.keys.platform_webhook]) {
      const pair = pure.signSeedKeyPair(b64(key.seed_base64));
      assert.equal(pair.publicKey.toString('base64'), key.public_key_base64);
      assert.equal(pair.secretKey.toString('base64'), key.full_key_base64);
    }
    const merchant = pure.signSeedKeyPair(b64(vectors.keys.merchant.seed_base64));
    const signed = [vectors.write_request, ...vectors.read_requests];
    for (const request of signed) {
      const signature = /:([^:]+):/.exec(request.signature)?.[1] ?? request.signature;
      const produced = pure.signDetached(Buffer.from(request.signature_base), merchant.secretKey);
      assert.equal(produced.toString('base64'), signature);
      assert.equal(pure.verifyDetached(produced, Buffer.from(request.signature_base), merchant.publicKey), true);
    }
    const platform = pure.signSeedKeyPair(b64(vectors.keys.platform_webhook.seed_base64));
    for (const webhook of vectors.webhooks) {
      const signature = /:([^:]+):/.exec(webhook.signature)?.[1] ?? webhook.signature;
      const base = Buffer.from(webhook.signature_base);
      assert.equal(pure.signDetached(base, platform.secretKey).toString('base64'), signature);
    }
  });

  it('gives the same verdicts as libsodium on valid, altered and non-canonical signatures', () => {
    for (let i = 0; i < 40; i++) {
      const pair = native.signSeedKeyPair(randomBytes(32));
      const message = randomBytes(i * 7);
      const signature = native.signDetached(message, pair.secretKey);
      const altered = Buffer.from(signature);
      altered[i % 64] = (altered[i % 64] as number) ^ 1;
      const cases: [Buffer, Buffer, Buffer][] = [
        [signature, message, pair.publicKey],
        [altered, message, pair.publicKey],
        [addOrderToS(signature), message, pair.publicKey],
        [signature, Buffer.concat([message, Buffer.from([0])]), pair.publicKey],
      ];
      for (const [sig, msg, key] of cases) {
        assert.equal(pure.verifyDetached(sig, msg, key), native.verifyDetached(sig, msg, key));
      }
    }
  });

  it('refuses the same Ed25519 points: small order, non-canonical, off the curve', () => {
    const points = [
      ...ED25519_TORSION_SUBGROUP.map((hex) => Buffer.from(hex, 'hex')),
      Buffer.alloc(32, 0xff),
      Buffer.concat([Buffer.from([0xed]), Buffer.alloc(30, 0xff), Buffer.from([0x7f])]),
      ...Array.from({ length: 30 }, () => randomBytes(32)),
      ...Array.from({ length: 10 }, () => native.signSeedKeyPair(randomBytes(32)).publicKey),
    ];
    for (const point of points) {
      assert.equal(pure.isValidEd25519Point(point), native.isValidEd25519Point(point), point.toString('hex'));
    }
    // A signature under a small-order key is refused by both.
    const message = Buffer.from('m');
    const zero = Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]);
    assert.equal(pure.verifyDetached(Buffer.concat([zero, Buffer.alloc(32)]), message, zero), false);
  });

  it('opens the vectors’ sealed boxes and refuses them altered', () => {
    for (const box of vectors.sealed_box_open) {
      const secretKey = b64(box.secret_key_base64);
      const publicKey = pure.x25519Base(secretKey);
      assert.deepEqual(publicKey, native.x25519Base(secretKey));
      const ciphertext = b64(box.ciphertext_base64);
      assert.equal(pure.boxSealOpen(ciphertext, publicKey, secretKey)?.toString('utf8'), box.plaintext_utf8);
      const altered = Buffer.from(ciphertext);
      altered[altered.length - 1] = (altered[altered.length - 1] as number) ^ 1;
      assert.equal(pure.boxSealOpen(altered, publicKey, secretKey), undefined);
    }
  });

  it('seals boxes libsodium opens, and opens boxes libsodium sealed', () => {
    for (const length of [0, 1, 63, 64, 65, 1000, 70_000]) {
      const secretKey = randomBytes(32);
      const publicKey = native.x25519Base(secretKey);
      const plaintext = randomBytes(length);
      const byPure = pure.boxSeal(plaintext, publicKey);
      assert.ok(byPure);
      assert.equal(byPure.length, length + 48);
      assert.deepEqual(native.boxSealOpen(byPure, publicKey, secretKey), plaintext);
      const byNative = native.boxSeal(plaintext, publicKey);
      assert.ok(byNative);
      assert.deepEqual(pure.boxSealOpen(byNative, publicKey, secretKey), plaintext);
    }
  });

  it('refuses to seal to the same small-order X25519 points', () => {
    const smallOrder = [
      Buffer.alloc(32),
      Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]),
      Buffer.from('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 'hex'),
      Buffer.from('5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157', 'hex'),
      Buffer.from('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex'),
    ];
    for (const point of [...smallOrder, randomBytes(32)]) {
      assert.equal(pure.isSmallOrderX25519(point), native.isSmallOrderX25519(point), point.toString('hex'));
      assert.equal(pure.boxSeal(Buffer.from('{}'), point) === undefined, native.isSmallOrderX25519(point));
    }
  });
});

describe('without the native addon', () => {
  // Without the runner's NODE_TEST_CONTEXT, so that the child's own --test runs its files.
  const { NODE_TEST_CONTEXT: _context, NODE_OPTIONS: _options, ...childEnv } = process.env;
  const node = (args: string[]) =>
    spawnSync(
      process.execPath,
      [
        '--require',
        join(import.meta.dirname, 'fixtures/without-sodium-native.cjs'),
        '--conditions=source',
        '--import',
        'tsx',
        ...args,
      ],
      { cwd: root, encoding: 'utf8', env: childEnv },
    );

  it('loads the protocol on the pure-JavaScript implementation', () => {
    const probe = node([
      '--input-type=module',
      '-e',
      "const p = await import('@paygate/protocol'); console.log(p.cryptoImplementation);",
    ]);
    assert.equal(probe.status, 0, probe.stderr);
    assert.equal(probe.stdout.trim(), 'noble');
  });

  it('passes the protocol vectors and the SDK’s signing and webhook vectors', () => {
    const run = node([
      '--test',
      '--test-reporter=tap',
      'packages/protocol/test/vectors.test.ts',
      'packages/protocol/test/webhook.test.ts',
      'packages/merchant/test/vectors.test.ts',
    ]);
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^# fail 0$/m);
    assert.ok(Number(/^# pass (\d+)$/m.exec(run.stdout)?.[1]) >= 50, run.stdout);
  });
});
