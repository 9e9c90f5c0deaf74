// The signature base (specification: Authentication, Signature base): golden strings written out
// by hand, so that any drift in component derivation or line format shows as a diff.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildSignatureBase,
  READ_COMPONENTS,
  type SignatureParams,
  signReadRequest,
  WEBHOOK_COMPONENTS,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import { merchantKey, unwrap } from './support.js';

const NONCE = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
const CREATED = 1767225600;
const EXPIRES = 1767225900;
const readParams: SignatureParams = {
  label: 'merchant',
  components: READ_COMPONENTS,
  created: CREATED,
  expires: EXPIRES,
  nonce: NONCE,
};
const READ_PARAMS_LINE = `"@signature-params": ("@method" "@path" "@query" "merchant-access-key");created=${CREATED};expires=${EXPIRES};nonce="${NONCE}";alg="ed25519"`;

const read = (method: string, path: string, query: string | undefined) =>
  unwrap(
    buildSignatureBase({ method, path, query, headers: { 'merchant-access-key': 'ak_test_Abc123Def456' } }, readParams),
  );

describe('signature base golden strings', () => {
  it('write request: every component in order, @signature-params last, LF-joined, no trailing newline', () => {
    const base = unwrap(
      buildSignatureBase(
        {
          method: 'POST',
          path: '/api/v1/payments',
          headers: {
            'content-type': 'application/json',
            'content-encryption': 'sealedbox-v1-x25519-xsalsa20poly1305',
            'content-digest': 'sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
            'idempotency-key': '9b2b8a51-6a3e-4d6e-9f0a-6c1d2e3f4a5b',
            'merchant-access-key': 'ak_test_Abc123Def456',
          },
        },
        { label: 'merchant', components: WRITE_COMPONENTS, created: CREATED, expires: EXPIRES, nonce: NONCE },
      ),
    );
    assert.equal(
      base,
      [
        '"@method": POST',
        '"@path": /api/v1/payments',
        '"content-type": application/json',
        '"content-encryption": sealedbox-v1-x25519-xsalsa20poly1305',
        '"content-digest": sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:',
        '"idempotency-key": 9b2b8a51-6a3e-4d6e-9f0a-6c1d2e3f4a5b',
        '"merchant-access-key": ak_test_Abc123Def456',
        `"@signature-params": ("@method" "@path" "content-type" "content-encryption" "content-digest" "idempotency-key" "merchant-access-key");created=${CREATED};expires=${EXPIRES};nonce="${NONCE}";alg="ed25519"`,
      ].join('\n'),
    );
    assert.ok(!base.endsWith('\n'));
    assert.ok(!base.includes('\r'));
  });

  it('read request: @query is ? followed by the raw query', () => {
    assert.equal(
      read('GET', '/api/v1/payments', 'orderNo=P202601010001'),
      [
        '"@method": GET',
        '"@path": /api/v1/payments',
        '"@query": ?orderNo=P202601010001',
        '"merchant-access-key": ak_test_Abc123Def456',
        READ_PARAMS_LINE,
      ].join('\n'),
    );
  });

  const queryRows: { rule: string; query: string | undefined; line: string }[] = [
    { rule: 'no query is a lone ?', query: undefined, line: '"@query": ?' },
    { rule: 'an empty query is a lone ?', query: '', line: '"@query": ?' },
    {
      rule: 'percent-encoding is not decoded',
      query: 'merchantOrderNo=M%2F001%20A',
      line: '"@query": ?merchantOrderNo=M%2F001%20A',
    },
    { rule: 'parameters are not reordered', query: 'b=2&a=1', line: '"@query": ?b=2&a=1' },
    { rule: 'empty values are not dropped', query: 'orderNo=&currency=', line: '"@query": ?orderNo=&currency=' },
    { rule: 'repeated parameters stay', query: 'a=1&a=1', line: '"@query": ?a=1&a=1' },
    { rule: '+ is not turned into a space', query: 'q=a+b', line: '"@query": ?q=a+b' },
    { rule: 'a ? inside the query stays', query: 'q=?x', line: '"@query": ?q=?x' },
  ];
  for (const row of queryRows) {
    it(`@query: ${row.rule}`, () => {
      assert.equal(read('GET', '/api/v1/payments', row.query).split('\n')[2], row.line);
    });
  }

  const pathRows: { rule: string; path: string; line: string }[] = [
    {
      rule: 'percent-encoding is not decoded',
      path: '/api/v1/payments/P%2F1',
      line: '"@path": /api/v1/payments/P%2F1',
    },
    { rule: 'dot segments are not removed', path: '/api/v1/../v1/payments', line: '"@path": /api/v1/../v1/payments' },
    { rule: 'a trailing slash stays', path: '/api/v1/payments/', line: '"@path": /api/v1/payments/' },
    { rule: 'case is kept', path: '/API/V1/Payments', line: '"@path": /API/V1/Payments' },
    { rule: 'repeated slashes stay', path: '//api//v1', line: '"@path": //api//v1' },
  ];
  for (const row of pathRows) {
    it(`@path: ${row.rule}`, () => {
      assert.equal(read('GET', row.path, undefined).split('\n')[1], row.line);
    });
  }

  it('@method is the uppercase method', () => {
    assert.equal(read('get', '/api/v1/payments', undefined).split('\n')[0], '"@method": GET');
  });

  it('header values are used as sent: inner and surrounding spaces, case', () => {
    const base = unwrap(
      buildSignatureBase({ method: 'GET', path: '/', headers: { 'merchant-access-key': ' AK_Test  x ' } }, readParams),
    );
    assert.equal(base.split('\n')[3], '"merchant-access-key":  AK_Test  x ');
  });

  it('@signature-params is the Signature-Input header without its label', () => {
    const signed = signReadRequest(
      { path: '/api/v1/payments', query: 'orderNo=1' },
      { accessKey: 'ak_test_Abc123Def456', key: merchantKey, created: CREATED, nonce: NONCE },
    );
    const lines = signed.signatureBase.split('\n');
    assert.equal(lines.length, 5);
    assert.equal(
      lines.at(-1),
      `"@signature-params": ${(signed.headers['signature-input'] as string).slice('merchant='.length)}`,
    );
    assert.equal(lines.at(-1), READ_PARAMS_LINE);
  });

  it('webhook: the fixed list with keyid between nonce and alg', () => {
    const base = unwrap(
      buildSignatureBase(
        {
          method: 'POST',
          path: '/webhook/payment',
          query: 'shop=7',
          headers: {
            'content-type': 'application/json',
            'content-digest': 'sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:',
            'webhook-event-id': 'evt_01HZX3K8Q9',
          },
        },
        {
          label: 'platform',
          components: WEBHOOK_COMPONENTS,
          created: CREATED,
          expires: EXPIRES,
          nonce: NONCE,
          keyid: 'whk-2026-01',
        },
      ),
    );
    assert.equal(
      base,
      [
        '"@method": POST',
        '"@path": /webhook/payment',
        '"@query": ?shop=7',
        '"content-type": application/json',
        '"content-digest": sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:',
        '"webhook-event-id": evt_01HZX3K8Q9',
        `"@signature-params": ("@method" "@path" "@query" "content-type" "content-digest" "webhook-event-id");created=${CREATED};expires=${EXPIRES};nonce="${NONCE}";keyid="whk-2026-01";alg="ed25519"`,
      ].join('\n'),
    );
  });
});

describe('signature base refuses', () => {
  const rows: { rule: string; headers: Record<string, string>; path?: string; component: string }[] = [
    { rule: 'a covered header that is absent', headers: {}, component: 'merchant-access-key' },
    {
      rule: 'a header value with a line feed',
      headers: { 'merchant-access-key': 'ak\n"@x": y' },
      component: 'merchant-access-key',
    },
    {
      rule: 'a header value with a carriage return',
      headers: { 'merchant-access-key': 'ak\r' },
      component: 'merchant-access-key',
    },
    { rule: 'a path with a line feed', headers: { 'merchant-access-key': 'ak' }, path: '/a\nb', component: '@path' },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      const result = buildSignatureBase({ method: 'GET', path: row.path ?? '/', headers: row.headers }, readParams);
      assert.deepEqual(result, { ok: false, error: { kind: 'missing-component', component: row.component } });
    });
  }
});
