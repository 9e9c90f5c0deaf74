import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { NonceCache, sign, signatureBase, verify } from '../src/auth.js';
import { SECRET, startSimulator, type Started } from './helpers.js';

const NOW = 1_800_000_000_000;
const NONCE = '0f8c2a4e-7b1d-4c3e-9a5f-6d2e1b0c9a8f';
const request = { method: 'POST', path: '/v1/charges?x=1', body: '{"reference":"P1"}' };

describe('auth: sign and verify', () => {
  test('the signature base is the timestamp, nonce, method, raw path and body bytes', () => {
    assert.equal(
      signatureBase('1800000000', NONCE, request).toString('utf8'),
      `1800000000\n${NONCE}\nPOST\n/v1/charges?x=1\n{"reference":"P1"}`,
    );
    const headers = sign(SECRET, request, { now: NOW, nonce: NONCE });
    const expected = createHmac('sha256', SECRET)
      .update(`1800000000\n${NONCE}\nPOST\n/v1/charges?x=1\n{"reference":"P1"}`)
      .digest('hex');
    assert.deepEqual(headers, { 'PSP-Timestamp': '1800000000', 'PSP-Nonce': NONCE, 'PSP-Signature': `v1=${expected}` });
  });

  const check = (overrides: { body?: string; now?: number; secret?: string; cache?: NonceCache } = {}) => {
    const headers = sign(SECRET, request, { now: NOW, nonce: NONCE });
    return verify(
      overrides.secret ?? SECRET,
      { ...request, body: overrides.body ?? request.body, headers },
      { now: overrides.now ?? NOW, nonceSeen: (overrides.cache ?? new NonceCache(() => NOW)).seen },
    );
  };

  test('a good request passes', () => {
    assert.deepEqual(check(), { ok: true, timestamp: 1_800_000_000, nonce: NONCE });
  });

  test('a tampered body is refused', () => {
    assert.deepEqual(check({ body: '{"reference":"P2"}' }), { ok: false, reason: 'bad_signature' });
  });

  test('a timestamp more than 300 s away is refused, either side', () => {
    assert.deepEqual(check({ now: NOW + 301_000 }), { ok: false, reason: 'stale_timestamp' });
    assert.deepEqual(check({ now: NOW - 301_000 }), { ok: false, reason: 'stale_timestamp' });
    assert.equal(check({ now: NOW + 299_000 }).ok, true);
  });

  test('a replayed nonce is refused', () => {
    const cache = new NonceCache(() => NOW);
    assert.equal(check({ cache }).ok, true);
    assert.deepEqual(check({ cache }), { ok: false, reason: 'replayed_nonce' });
  });

  test('a forged request does not burn the nonce', () => {
    const cache = new NonceCache(() => NOW);
    assert.equal(check({ cache, body: 'forged' }).ok, false);
    assert.equal(check({ cache }).ok, true);
  });

  test('the wrong secret is refused', () => {
    assert.deepEqual(check({ secret: 'another-secret-entirely' }), { ok: false, reason: 'bad_signature' });
  });

  test('missing or malformed headers are refused', () => {
    const headers = sign(SECRET, request, { now: NOW, nonce: NONCE });
    const options = { now: NOW, nonceSeen: () => false };
    assert.deepEqual(verify(SECRET, { ...request, headers: {} }, options), { ok: false, reason: 'missing_headers' });
    assert.deepEqual(verify(SECRET, { ...request, headers: { ...headers, 'PSP-Signature': 'v2=00' } }, options), {
      ok: false,
      reason: 'malformed_headers',
    });
    // fetch's Headers and node's lower-cased header records both work.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    assert.equal(verify(SECRET, { ...request, headers: lower }, options).ok, true);
    assert.equal(verify(SECRET, { ...request, headers: new Headers(headers) }, options).ok, true);
  });
});

describe('auth over HTTP: the API refuses with 401 {"error":"unauthorized"}', () => {
  let psp: Started;
  before(async () => {
    psp = await startSimulator();
  });
  after(() => psp.stop());

  const charge = {
    reference: 'P000000000000000001',
    amount: '10.00',
    currency: 'BRL',
    method: 'PIX',
    notifyUrl: 'http://127.0.0.1:1/n',
  };

  test('good, wrong secret, tampered body, stale timestamp, replay, unsigned', async () => {
    assert.equal((await psp.call('POST', '/v1/charges', charge)).status, 201);
    assert.deepEqual(await psp.call('GET', '/v1/charges?reference=P000000000000000001', undefined, 'wrong-secret'), {
      status: 401,
      body: { error: 'unauthorized' },
      text: '{"error":"unauthorized"}',
    });

    const send = (headers: Record<string, string>, body: string) =>
      fetch(`${psp.url}/v1/charges`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
    const raw = JSON.stringify({ ...charge, reference: 'P000000000000000002' });
    const headers = sign(
      SECRET,
      { method: 'POST', path: '/v1/charges', body: raw },
      { now: Date.now(), nonce: randomUUID() },
    );
    assert.equal((await send(headers, raw.replace('10.00', '99.00'))).status, 401);
    const stale = sign(
      SECRET,
      { method: 'POST', path: '/v1/charges', body: raw },
      { now: Date.now() - 400_000, nonce: randomUUID() },
    );
    assert.equal((await send(stale, raw)).status, 401);
    assert.equal((await send(headers, raw)).status, 201);
    assert.equal((await send(headers, raw)).status, 401, 'the same nonce again is a replay');
    assert.equal((await fetch(`${psp.url}/v1/charges/ch_x`)).status, 401);
  });
});
