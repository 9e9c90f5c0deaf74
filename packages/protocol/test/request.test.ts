// verifyRequest (specification: Authentication, Server verification order; Endpoints, Common
// rules; Limits): one row per rule, each refused at the step the specification puts it in, and
// never reaching a later step's lookups.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sodium from 'sodium-native';
import {
  buildSignatureBase,
  contentDigest,
  ENVELOPE_ALG,
  MAX_PLAINTEXT_BYTES,
  MAX_WIRE_BODY_BYTES,
  parseSignatureInput,
  READ_COMPONENTS,
  type ReceivedRequest,
  REQUEST_PROFILE,
  type SignatureParams,
  type SigningKey,
  sealEnvelope,
  serializeSignature,
  serializeSignatureInput,
  sign,
  type VerificationStep,
  verifyRequest,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import {
  ACCESS_KEY_ID,
  assertFailedAt,
  BODY_KEY_ID,
  bodyKey,
  freshUuid,
  headerOf,
  merchantKey,
  NOW,
  otherBodyKey,
  otherMerchantKey,
  PAYMENTS_PATH,
  PLAINTEXT,
  type RecordingDeps,
  signedRead,
  signedWrite,
  signRaw,
  signWriteBody,
  unwrap,
  verifierDeps,
  webhookKey,
  withExtraHeader,
  withHeader,
  withoutHeader,
} from './support.js';

/** The request with its Signature-Input parameters changed after signing (Signature untouched). */
function withParams(request: ReceivedRequest, change: (params: SignatureParams) => SignatureParams): ReceivedRequest {
  const params = unwrap(parseSignatureInput(headerOf(request, 'signature-input'), REQUEST_PROFILE));
  return withHeader(request, 'signature-input', serializeSignatureInput(change(params)));
}

/** The request with its Signature-Input header text edited after signing. */
const editInput = (request: ReceivedRequest, from: string, to: string) =>
  withHeader(request, 'signature-input', headerOf(request, 'signature-input').replace(from, to));

const withBody = (request: ReceivedRequest, body: Uint8Array): ReceivedRequest => ({ ...request, body });
const flipBodyByte = (request: ReceivedRequest, index: number) => {
  const body = Buffer.from(request.body);
  body[index] = (body[index] as number) ^ 0x01;
  return withBody(request, body);
};
/** Node's `rawHeaders` form: a flat [name, value, name, value, ...] array. */
const flat = (request: ReceivedRequest): ReceivedRequest => ({
  ...request,
  headers: (request.headers as (readonly [string, string])[]).flat(),
});

const readParams = (overrides: Partial<SignatureParams> = {}): SignatureParams => ({
  label: 'merchant',
  components: READ_COMPONENTS,
  created: NOW,
  expires: NOW + 300,
  nonce: freshUuid(),
  ...overrides,
});
const readParts = (path = PAYMENTS_PATH, query: string | undefined = 'orderNo=1') => ({
  method: 'GET',
  path,
  query,
  headers: { 'merchant-access-key': ACCESS_KEY_ID },
  body: Buffer.alloc(0),
});

/** A read request signed with arbitrary parameters. */
const signReadWith = (overrides: Partial<SignatureParams>) => signRaw(readParts(), readParams(overrides));

/** A write of `body` with its headers and digest, signed with `key` (parameters in `order`). */
function signWriteWithKey(
  body: Buffer,
  key: SigningKey,
  parameterOrder?: SignatureParams['parameterOrder'],
): ReceivedRequest {
  const headers = {
    'content-type': 'application/json',
    'content-encryption': ENVELOPE_ALG,
    'content-digest': contentDigest(body),
    'idempotency-key': freshUuid(),
    'merchant-access-key': ACCESS_KEY_ID,
  };
  const params: SignatureParams = {
    ...readParams(),
    components: WRITE_COMPONENTS,
    ...(parameterOrder ? { parameterOrder } : {}),
  };
  return signRaw({ method: 'POST', path: PAYMENTS_PATH, query: undefined, headers, body }, params, key);
}

/** Wire bytes of an envelope sealed to `publicKey` without sealEnvelope's 1 MiB limit. */
function rawEnvelope(plaintext: Uint8Array, members: { keyId?: string; publicKey?: Buffer } = {}): Buffer {
  const box = Buffer.alloc(plaintext.length + sodium.crypto_box_SEALBYTES);
  sodium.crypto_box_seal(box, Buffer.from(plaintext), members.publicKey ?? bodyKey.publicKey);
  return Buffer.from(
    JSON.stringify({
      version: 1,
      alg: ENVELOPE_ALG,
      keyId: members.keyId ?? BODY_KEY_ID,
      ciphertext: box.toString('base64'),
    }),
  );
}

/** Which lookups each step may have made before failing. */
const LATER_CALLS: Record<VerificationStep, (keyof RecordingDeps['calls'])[]> = {
  shape: ['merchant', 'nonce', 'bodyKey'],
  digest: ['merchant', 'nonce', 'bodyKey'],
  'signature-input': ['merchant', 'nonce', 'bodyKey'],
  signature: ['nonce', 'bodyKey'],
  nonce: ['bodyKey'],
  envelope: [],
};

interface Row {
  readonly rule: string;
  readonly request: () => ReceivedRequest;
  readonly step: VerificationStep;
  readonly reason: RegExp;
  /** Changes the verifier's dependencies (clock, keys, lookups). */
  readonly deps?: Parameters<typeof verifierDeps>[0];
  /** Runs first with the same dependencies, e.g. to use a nonce up. */
  readonly before?: (request: ReceivedRequest, deps: RecordingDeps) => Promise<unknown>;
}

function runRows(rows: readonly Row[]): void {
  for (const row of rows) {
    it(row.rule, async () => {
      const request = row.request();
      const deps = verifierDeps(row.deps);
      if (row.before) await row.before(request, deps);
      const calls = { ...deps.calls };
      const result = await verifyRequest(request, deps);
      assertFailedAt(result, row.step, row.reason);
      for (const lookup of LATER_CALLS[row.step]) {
        assert.equal(deps.calls[lookup], calls[lookup], `a ${row.step} failure must not reach the ${lookup} lookup`);
      }
    });
  }
}

describe('verifyRequest accepts', () => {
  it('a signed, sealed write and returns its plaintext', async () => {
    const verified = unwrap(await verifyRequest(signedWrite(), verifierDeps()));
    assert.equal(verified.kind, 'write');
    assert.equal(verified.accessKey, ACCESS_KEY_ID);
    assert.equal(verified.keyIndex, 0);
    assert.deepEqual(verified.plaintext, PLAINTEXT);
    assert.deepEqual(verified.params.components, WRITE_COMPONENTS);
  });

  const reads: { form: string; request: () => ReceivedRequest }[] = [
    { form: 'a read with a query', request: () => signedRead('orderNo=P1&merchantOrderNo=M%2F1') },
    { form: 'a read without a query', request: () => signedRead(undefined) },
    { form: 'a read whose target ends in a lone ?', request: () => signedRead('') },
    { form: 'a read with Content-Length: 0', request: () => withHeader(signedRead(), 'content-length', '0') },
  ];
  for (const { form, request } of reads) {
    it(form, async () => {
      const verified = unwrap(await verifyRequest(request(), verifierDeps()));
      assert.equal(verified.kind, 'read');
      assert.equal(verified.plaintext, undefined);
    });
  }

  it("headers in Node's flat rawHeaders form, with any name case", async () => {
    const request = signedWrite();
    const renamed = {
      ...request,
      headers: (request.headers as (readonly [string, string])[]).map(([name, value]): [string, string] => [
        name.toUpperCase(),
        value,
      ]),
    };
    assert.ok((await verifyRequest(flat(renamed), verifierDeps())).ok);
  });

  it('Content-Encoding: identity, and Content-Length on a write', async () => {
    const request = withHeader(withHeader(signedWrite(), 'content-encoding', 'identity'), 'content-length', '1');
    assert.ok((await verifyRequest(request, verifierDeps())).ok);
  });

  it('the second of two active keys during a rotation', async () => {
    const deps = verifierDeps({
      lookupMerchant: () => ({ id: 'm1', publicKeys: [otherMerchantKey.publicKey, merchantKey.publicKey] }),
    });
    assert.equal(unwrap(await verifyRequest(signedWrite(), deps)).keyIndex, 1);
  });

  it('asynchronous lookups', async () => {
    const deps = verifierDeps({
      lookupMerchant: async () => ({ id: 'm1', publicKeys: [merchantKey.publicKey] }),
      consumeNonce: async () => true,
      lookupBodyKey: async () => bodyKey,
    });
    assert.ok((await verifyRequest(signedWrite(), deps)).ok);
  });

  const windows: { rule: string; created: number }[] = [
    { rule: 'now equal to expires', created: NOW - 300 },
    { rule: 'created 300 seconds ahead of now', created: NOW + 300 },
  ];
  for (const { rule, created } of windows) {
    it(`(boundary) ${rule}`, async () => {
      assert.ok((await verifyRequest(signedWrite({ created }), verifierDeps())).ok);
      assert.ok((await verifyRequest(signedRead('orderNo=1', { created }), verifierDeps())).ok);
    });
  }

  // Other RFC 9421 signers (decisions: Signature-Input as other signers write it).
  const orders: NonNullable<SignatureParams['parameterOrder']>[] = [
    ['alg', 'created', 'expires', 'nonce'],
    ['nonce', 'alg', 'expires', 'created'],
    ['created', 'nonce', 'alg', 'expires'],
  ];
  for (const order of orders) {
    it(`parameters signed in the order ${order.join(', ')}`, async () => {
      const read = signReadWith({ parameterOrder: order });
      assert.match(headerOf(read, 'signature-input'), new RegExp(`\\);${order[0]}=`));
      assert.deepEqual(unwrap(await verifyRequest(read, verifierDeps())).params.parameterOrder, order);
      const sealed = unwrap(sealEnvelope(PLAINTEXT, { keyId: BODY_KEY_ID, publicKey: bodyKey.publicKey }));
      const verified = unwrap(await verifyRequest(signWriteWithKey(sealed, merchantKey, order), verifierDeps()));
      assert.deepEqual(verified.plaintext, PLAINTEXT);
    });
  }

  it('a Signature-Input with the optional whitespace RFC 8941 allows, added after signing', async () => {
    const spaced = (request: ReceivedRequest) =>
      withHeader(
        request,
        'signature-input',
        headerOf(request, 'signature-input').replace('=(', '=(  ').replace(')', ' )').replaceAll(';', '; '),
      );
    for (const request of [signedWrite(), signedRead(), signReadWith({ parameterOrder: orders[1] })]) {
      assert.match(headerOf(spaced(request), 'signature-input'), /^merchant=\( {2}"@method".* \); /);
      assert.ok((await verifyRequest(spaced(request), verifierDeps())).ok);
    }
  });

  it('(boundary) a plaintext of exactly 1 MiB', async () => {
    const request = signWriteBody(rawEnvelope(Buffer.alloc(MAX_PLAINTEXT_BYTES, 0x20)));
    assert.equal(unwrap(await verifyRequest(request, verifierDeps())).plaintext?.length, MAX_PLAINTEXT_BYTES);
  });
});

describe('verifyRequest refuses at shape', () => {
  const writeHeaders = ['content-type', 'content-encryption', 'content-digest', 'idempotency-key'];
  const signedHeaders = ['merchant-access-key', 'signature-input', 'signature'];
  runRows([
    ...['PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'post', 'Get'].map((method) => ({
      rule: `method ${method}`,
      request: () => ({ ...signedWrite(), method }),
      step: 'shape' as const,
      reason: /method .* is not allowed/,
    })),
    ...signedHeaders.map((name) => ({
      rule: `a write without ${name}`,
      request: () => withoutHeader(signedWrite(), name),
      step: 'shape' as const,
      reason: /missing/,
    })),
    ...signedHeaders.map((name) => ({
      rule: `a read without ${name}`,
      request: () => withoutHeader(signedRead(), name),
      step: 'shape' as const,
      reason: /missing/,
    })),
    ...writeHeaders.map((name) => ({
      rule: `a write without ${name}`,
      request: () => withoutHeader(signedWrite(), name),
      step: 'shape' as const,
      reason: new RegExp(`missing ${name}`),
    })),
    ...[...signedHeaders, ...writeHeaders].map((name) => ({
      rule: `a write with ${name} twice (same value)`,
      request: () => {
        const request = signedWrite();
        return withExtraHeader(request, name, headerOf(request, name));
      },
      step: 'shape' as const,
      reason: new RegExp(`header ${name} is repeated`),
    })),
    ...signedHeaders.map((name) => ({
      rule: `a read with ${name} twice, in rawHeaders form with another name case`,
      request: () => {
        const request = signedRead();
        return flat(withExtraHeader(request, name.toUpperCase(), headerOf(request, name)));
      },
      step: 'shape' as const,
      reason: new RegExp(`header ${name} is repeated`),
    })),
    {
      rule: 'Content-Encoding twice',
      request: () =>
        withExtraHeader(withHeader(signedWrite(), 'content-encoding', 'identity'), 'content-encoding', 'identity'),
      step: 'shape',
      reason: /content-encoding is repeated/,
    },
    {
      rule: 'Content-Length twice',
      request: () => withExtraHeader(withHeader(signedWrite(), 'content-length', '1'), 'content-length', '1'),
      step: 'shape',
      reason: /content-length is repeated/,
    },
    {
      rule: 'a malformed Merchant-Access-Key',
      request: () => withHeader(signedRead(), 'merchant-access-key', 'ak_prod_Abc123Def456'),
      step: 'shape',
      reason: /Merchant-Access-Key/,
    },
    // reads carry no body and no write headers
    {
      rule: 'a body on a GET',
      request: () => withBody(signedRead(), Buffer.from('{}')),
      step: 'shape',
      reason: /GET request carries no body/,
    },
    {
      rule: 'Content-Length: 2 on a GET',
      request: () => withHeader(signedRead(), 'content-length', '2'),
      step: 'shape',
      reason: /carries no body/,
    },
    {
      rule: 'Transfer-Encoding on a GET',
      request: () => withHeader(signedRead(), 'transfer-encoding', 'chunked'),
      step: 'shape',
      reason: /carries no body/,
    },
    ...writeHeaders.map((name) => ({
      rule: `${name} on a GET`,
      request: () => withHeader(signedRead(), name, 'x'),
      step: 'shape' as const,
      reason: new RegExp(`does not send ${name}`),
    })),
    // writes carry no query string and only the specified header values
    {
      rule: 'a query string on a POST',
      request: () => ({ ...signedWrite(), query: 'orderNo=1' }),
      step: 'shape',
      reason: /no query string/,
    },
    {
      rule: 'an empty query string (lone ?) on a POST',
      request: () => ({ ...signedWrite(), query: '' }),
      step: 'shape',
      reason: /no query string/,
    },
    {
      rule: 'Content-Encoding: gzip on a POST',
      request: () => withHeader(signedWrite(), 'content-encoding', 'gzip'),
      step: 'shape',
      reason: /Content-Encoding is not identity/,
    },
    {
      rule: 'Content-Encoding: br on a GET',
      request: () => withHeader(signedRead(), 'content-encoding', 'br'),
      step: 'shape',
      reason: /Content-Encoding is not identity/,
    },
    {
      rule: 'Content-Encoding: identity, gzip',
      request: () => withHeader(signedWrite(), 'content-encoding', 'identity, gzip'),
      step: 'shape',
      reason: /not identity/,
    },
    {
      rule: 'Content-Type with a charset',
      request: () => withHeader(signedWrite(), 'content-type', 'application/json; charset=utf-8'),
      step: 'shape',
      reason: /Content-Type/,
    },
    {
      rule: 'Content-Type text/plain',
      request: () => withHeader(signedWrite(), 'content-type', 'text/plain'),
      step: 'shape',
      reason: /Content-Type/,
    },
    {
      rule: 'another Content-Encryption',
      request: () => withHeader(signedWrite(), 'content-encryption', 'aes-256-gcm'),
      step: 'shape',
      reason: /Content-Encryption/,
    },
    {
      rule: 'an Idempotency-Key that is not a UUID v4',
      request: () => withHeader(signedWrite(), 'idempotency-key', 'order-1'),
      step: 'shape',
      reason: /Idempotency-Key/,
    },
    {
      rule: 'a wire body over 2 MiB',
      request: () => signWriteBody(Buffer.alloc(MAX_WIRE_BODY_BYTES + 1, 0x20)),
      step: 'shape',
      reason: /exceeds 2 MiB/,
    },
  ]);
});

describe('verifyRequest refuses at digest', () => {
  runRows([
    {
      rule: 'one body byte changed',
      request: () => flipBodyByte(signedWrite(), 40),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'a trailing newline added to the body',
      request: () => {
        const r = signedWrite();
        return withBody(r, Buffer.concat([r.body, Buffer.from('\n')]));
      },
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'the body of another signed request',
      request: () => withBody(signedWrite(), signedWrite().body),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'a digest of the plaintext instead of the envelope',
      request: () => withHeader(signedWrite(), 'content-digest', contentDigest(PLAINTEXT)),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'an empty body',
      request: () => withBody(signedWrite(), Buffer.alloc(0)),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'a sha-512 digest',
      request: () => withHeader(signedWrite(), 'content-digest', 'sha-512=:AAAA:'),
      step: 'digest',
      reason: /Content-Digest/,
    },
  ]);
});

describe('verifyRequest refuses at signature-input', () => {
  runRows([
    {
      rule: 'an expired write (now > expires)',
      request: () => signedWrite({ created: NOW - 301 }),
      step: 'signature-input',
      reason: /expired/,
    },
    {
      rule: 'an expired read',
      request: () => signedRead('orderNo=1', { created: NOW - 301 }),
      step: 'signature-input',
      reason: /expired/,
    },
    {
      rule: 'a write created more than 300 s ahead',
      request: () => signedWrite({ created: NOW + 301 }),
      step: 'signature-input',
      reason: /in the future/,
    },
    {
      rule: 'a read created more than 300 s ahead',
      request: () => signedRead('orderNo=1', { created: NOW + 301 }),
      step: 'signature-input',
      reason: /in the future/,
    },
    {
      rule: 'expires - created of 301 s',
      request: () => signWriteBody(signedWrite().body, { created: NOW - 1, expires: NOW + 300 }),
      step: 'signature-input',
      reason: /exceeds 300/,
    },
    {
      rule: 'alg other than ed25519',
      request: () => editInput(signedWrite(), 'alg="ed25519"', 'alg="hmac-sha256"'),
      step: 'signature-input',
      reason: /alg must be/,
    },
    {
      rule: 'alg as a token',
      request: () => editInput(signedRead(), 'alg="ed25519"', 'alg=ed25519'),
      step: 'signature-input',
      reason: /alg must be/,
    },
    {
      rule: 'a nonce that is not a UUID v4',
      request: () => signReadWith({ nonce: '12345' }),
      step: 'signature-input',
      reason: /nonce must be a UUID v4/,
    },
    {
      rule: 'a keyid on a request',
      request: () => signReadWith({ keyid: 'k1' }),
      step: 'signature-input',
      reason: /keyid is not allowed/,
    },
    {
      rule: 'another label',
      request: () => signReadWith({ label: 'platform' }),
      step: 'signature-input',
      reason: /no signature labelled merchant/,
    },
    {
      rule: 'the write list on a GET',
      request: () => withParams(signedRead(), (p) => ({ ...p, components: WRITE_COMPONENTS })),
      step: 'signature-input',
      reason: /GET request covers the read list/,
    },
    {
      rule: 'the read list on a POST',
      request: () => withParams(signedWrite(), (p) => ({ ...p, components: READ_COMPONENTS })),
      step: 'signature-input',
      reason: /POST request covers the write list/,
    },
    {
      rule: 'a component removed from the write list',
      request: () =>
        withParams(signedWrite(), (p) => ({
          ...p,
          components: WRITE_COMPONENTS.filter((c) => c !== 'content-digest'),
        })),
      step: 'signature-input',
      reason: /not the required list/,
    },
    {
      rule: 'a component added to the read list',
      request: () => withParams(signedRead(), (p) => ({ ...p, components: [...READ_COMPONENTS, 'content-type'] })),
      step: 'signature-input',
      reason: /not the required list/,
    },
    {
      rule: 'the read list reordered',
      request: () =>
        withParams(signedRead(), (p) => ({ ...p, components: ['@method', '@query', '@path', 'merchant-access-key'] })),
      step: 'signature-input',
      reason: /not the required list/,
    },
    {
      rule: 'a nonce repeated, after a space',
      request: () => editInput(signedRead(), ';alg=', `; nonce="${freshUuid()}";alg=`),
      step: 'signature-input',
      reason: /parameter nonce is repeated/,
    },
    {
      rule: 'the same nonce twice, signed that way',
      request: () => {
        const request = signedWrite();
        const nonce = /nonce="([^"]+)"/.exec(headerOf(request, 'signature-input'))?.[1] as string;
        return editInput(request, ';alg=', `;nonce="${nonce}";alg=`);
      },
      step: 'signature-input',
      reason: /parameter nonce is repeated/,
    },
    {
      rule: 'a keyid among reordered parameters',
      request: () => signReadWith({ keyid: 'k1', parameterOrder: ['keyid', 'alg', 'nonce', 'created', 'expires'] }),
      step: 'signature-input',
      reason: /keyid is not allowed/,
    },
    {
      rule: 'a Signature-Input that is not a dictionary',
      request: () => withHeader(signedWrite(), 'signature-input', '("@method")'),
      step: 'signature-input',
      reason: /RFC 8941/,
    },
  ]);
});

describe('verifyRequest refuses at signature', () => {
  runRows([
    {
      // The @signature-params line keeps the order received, so it is no longer the line signed.
      rule: 'parameters reordered after signing',
      request: () =>
        withParams(signedRead(), (p) => ({ ...p, parameterOrder: ['expires', 'created', 'nonce', 'alg'] })),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a write signed in one order, sent in another',
      request: () => {
        const signed = signWriteWithKey(Buffer.from('{}'), merchantKey, ['alg', 'nonce', 'created', 'expires']);
        return withParams(signed, (p) => ({ ...p, parameterOrder: ['alg', 'created', 'nonce', 'expires'] }));
      },
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a write signed with another key',
      request: () => signedWrite({ key: otherMerchantKey }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a read signed with another key',
      request: () => signedRead('orderNo=1', { key: otherMerchantKey }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a read signed with the platform webhook key',
      request: () => signedRead('orderNo=1', { key: webhookKey }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'an unknown access key',
      request: () => withHeader(signedRead(), 'merchant-access-key', 'ak_test_Unknown12345'),
      step: 'signature',
      reason: /unknown access key/,
    },
    {
      rule: 'a merchant with no active key',
      request: () => signedRead(),
      deps: { lookupMerchant: () => ({ id: 'm1', publicKeys: [] }) },
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'another request’s signature',
      request: () => withHeader(signedRead(), 'signature', headerOf(signedRead(), 'signature')),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a Signature under another label',
      request: () => {
        const r = signedRead();
        return withHeader(r, 'signature', headerOf(r, 'signature').replace('merchant=', 'platform='));
      },
      step: 'signature',
      reason: /no signature labelled merchant/,
    },
    {
      rule: 'a Signature of 63 bytes',
      request: () => withHeader(signedRead(), 'signature', serializeSignature('merchant', Buffer.alloc(63))),
      step: 'signature',
      reason: /64 bytes/,
    },
    {
      rule: 'a Signature that is not a byte sequence',
      request: () => withHeader(signedRead(), 'signature', 'merchant="abc"'),
      step: 'signature',
      reason: /not a byte sequence/,
    },
    {
      rule: 'the path changed',
      request: () => ({ ...signedWrite(), path: '/api/v1/payouts' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the path percent-decoded',
      request: () => ({ ...signRaw(readParts('/api/v1/pay%6Dents'), readParams()), path: PAYMENTS_PATH }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query changed',
      request: () => ({ ...signedRead('orderNo=1'), query: 'orderNo=2' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query reordered',
      request: () => ({ ...signedRead('a=1&b=2'), query: 'b=2&a=1' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query percent-decoded',
      request: () => ({ ...signedRead('merchantOrderNo=M%2F1'), query: 'merchantOrderNo=M/1' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'an empty value dropped from the query',
      request: () => ({ ...signedRead('orderNo=1&x='), query: 'orderNo=1' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a query added to a read signed without one',
      request: () => ({ ...signedRead(undefined), query: 'orderNo=1' }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query removed',
      request: () => ({ ...signedRead('orderNo=1'), query: undefined }),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'another Idempotency-Key',
      request: () => withHeader(signedWrite(), 'idempotency-key', freshUuid()),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the body and its digest replaced together',
      request: () => {
        const other = signedWrite();
        return withHeader(withBody(signedWrite(), other.body), 'content-digest', headerOf(other, 'content-digest'));
      },
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'created changed after signing',
      request: () => withParams(signedWrite(), (p) => ({ ...p, created: p.created + 1 })),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'expires changed after signing',
      request: () => withParams(signedWrite(), (p) => ({ ...p, expires: p.expires - 1 })),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the nonce changed after signing',
      request: () => withParams(signedRead(), (p) => ({ ...p, nonce: freshUuid() })),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a signature over the base with a trailing newline',
      request: () => {
        const params = readParams();
        const base = unwrap(buildSignatureBase(readParts(), params));
        return withHeader(
          signRaw(readParts(), params),
          'signature',
          serializeSignature('merchant', sign(`${base}\n`, merchantKey)),
        );
      },
      step: 'signature',
      reason: /does not verify/,
    },
  ]);

  it('reports the base it built, for the sandbox debugger', async () => {
    const result = await verifyRequest(signedRead('orderNo=1', { key: otherMerchantKey }), verifierDeps());
    assert.ok(!result.ok);
    assert.match(
      result.error.signatureBase ?? '',
      /^"@method": GET\n"@path": \/api\/v1\/payments\n"@query": \?orderNo=1\n/,
    );
    assert.equal(result.error.accessKey, ACCESS_KEY_ID);
  });
});

describe('verifyRequest refuses at nonce', () => {
  runRows([
    {
      rule: 'the same write a second time',
      request: () => signedWrite(),
      before: (request, deps) => verifyRequest(request, deps).then((first) => assert.ok(first.ok)),
      step: 'nonce',
      reason: /nonce was used before/,
    },
    {
      rule: 'a fresh read signed with a used nonce',
      request: () => signedRead('orderNo=2', { nonce: 'c0ffee00-1234-4abc-8def-0123456789ab' }),
      before: (_request, deps) =>
        verifyRequest(signedRead('orderNo=1', { nonce: 'c0ffee00-1234-4abc-8def-0123456789ab' }), deps).then((first) =>
          assert.ok(first.ok),
        ),
      step: 'nonce',
      reason: /nonce was used before/,
    },
    {
      rule: 'a nonce store that answers false asynchronously',
      request: () => signedRead(),
      deps: { consumeNonce: async () => false },
      step: 'nonce',
      reason: /used before/,
    },
  ]);
});

describe("verifyRequest with consumeNonce: 'caller'", () => {
  it('records nothing and returns the nonce, its expiry and the signature base', async () => {
    const deps = verifierDeps({ consumeNonce: 'caller' });
    const request = signedWrite();
    const first = unwrap(await verifyRequest(request, deps));
    // Nothing was recorded: the same request verifies again; the caller decides on the nonce.
    const again = unwrap(await verifyRequest(request, deps));
    assert.equal(deps.usedNonces.size, 0);
    assert.equal(again.params.nonce, first.params.nonce);
    assert.match(first.params.nonce, /^[0-9a-f-]{36}$/i);
    assert.equal(first.params.expires, first.params.created + 300);
    assert.match(first.signatureBase, /^"@method": POST\n/);
    assert.deepEqual(first.plaintext, PLAINTEXT);
  });

  it('a failure past the signature (the envelope) carries the nonce for the caller to record', async () => {
    const deps = verifierDeps({ consumeNonce: 'caller' });
    const result = await verifyRequest(signWriteBody(rawEnvelope(PLAINTEXT, { keyId: 'body-retired' })), deps);
    assertFailedAt(result, 'envelope', /unknown keyId/);
    assert.ok(!result.ok && result.error.nonce && /^[0-9a-f-]{36}$/i.test(result.error.nonce.value));
    // With a recording store, the same failure carries none: the nonce was recorded.
    const recorded = await verifyRequest(
      signWriteBody(rawEnvelope(PLAINTEXT, { keyId: 'body-retired' })),
      verifierDeps(),
    );
    assert.ok(!recorded.ok && recorded.error.nonce === undefined);
  });
});

describe('verifyRequest refuses at envelope', () => {
  const bigPlaintext = Buffer.alloc(MAX_PLAINTEXT_BYTES + 1, 0x20);
  runRows([
    {
      rule: 'an unknown keyId (the lookup returns undefined)',
      request: () => signWriteBody(rawEnvelope(PLAINTEXT, { keyId: 'body-retired' })),
      step: 'envelope',
      reason: /unknown keyId/,
    },
    {
      rule: 'a box sealed to another body key',
      request: () => signWriteBody(rawEnvelope(PLAINTEXT, { publicKey: otherBodyKey.publicKey })),
      step: 'envelope',
      reason: /does not open/,
    },
    {
      rule: 'trailing content after the envelope',
      request: () => signWriteBody(Buffer.concat([rawEnvelope(PLAINTEXT), Buffer.from('{}')])),
      step: 'envelope',
      reason: /trailing content/,
    },
    {
      rule: 'a fifth envelope member',
      request: () =>
        signWriteBody(Buffer.from(JSON.stringify({ ...JSON.parse(rawEnvelope(PLAINTEXT).toString()), extra: 1 }))),
      step: 'envelope',
      reason: /exactly/,
    },
    {
      rule: 'version "1"',
      request: () =>
        signWriteBody(Buffer.from(rawEnvelope(PLAINTEXT).toString().replace('"version":1', '"version":"1"'))),
      step: 'envelope',
      reason: /version must be 1/,
    },
    {
      rule: 'an envelope alg other than the Content-Encryption header',
      request: () =>
        signWriteBody(Buffer.from(rawEnvelope(PLAINTEXT).toString().replace(ENVELOPE_ALG, 'sealedbox-v2'))),
      step: 'envelope',
      reason: /unknown alg/,
    },
    {
      rule: 'the plaintext itself instead of an envelope',
      request: () => signWriteBody(PLAINTEXT),
      step: 'envelope',
      reason: /exactly|not a string or an integer/,
    },
    {
      rule: 'an empty body',
      request: () => signWriteBody(Buffer.alloc(0)),
      step: 'envelope',
      reason: /not a JSON object/,
    },
    {
      rule: 'a plaintext over 1 MiB (authentic, flagged too large)',
      request: () => signWriteBody(rawEnvelope(bigPlaintext)),
      step: 'envelope',
      reason: /plaintext exceeds 1 MiB/,
    },
  ]);

  it('flags only the over-1 MiB plaintext as tooLarge', async () => {
    const big = await verifyRequest(signWriteBody(rawEnvelope(bigPlaintext)), verifierDeps());
    assert.ok(!big.ok && big.error.tooLarge === true);
    const other = await verifyRequest(signWriteBody(rawEnvelope(PLAINTEXT, { keyId: 'x' })), verifierDeps());
    assert.ok(!other.ok && other.error.tooLarge === undefined);
  });
});

describe('verifyRequest reports the earlier step when two rules fail', () => {
  const usedNonce = 'deadbeef-0000-4000-8000-000000000001';
  const useNonce = (deps: RecordingDeps) =>
    verifyRequest(signedRead('orderNo=0', { nonce: usedNonce }), deps).then((r) => assert.ok(r.ok));
  runRows([
    {
      rule: 'shape (method) before digest (body changed)',
      request: () => ({ ...flipBodyByte(signedWrite(), 40), method: 'PUT' }),
      step: 'shape',
      reason: /method/,
    },
    {
      rule: 'shape (duplicate Signature) before signature-input (expired)',
      request: () => {
        const r = signedWrite({ created: NOW - 1000 });
        return withExtraHeader(r, 'signature', headerOf(r, 'signature'));
      },
      step: 'shape',
      reason: /repeated/,
    },
    {
      rule: 'digest (body changed) before signature-input (expired)',
      request: () => flipBodyByte(signedWrite({ created: NOW - 1000 }), 40),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'digest (body changed) before signature (wrong key)',
      request: () => flipBodyByte(signedWrite({ key: otherMerchantKey }), 40),
      step: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'signature-input (expired) before signature (wrong key)',
      request: () => signedWrite({ created: NOW - 1000, key: otherMerchantKey }),
      step: 'signature-input',
      reason: /expired/,
    },
    {
      rule: 'signature-input (components) before signature (garbage Signature)',
      request: () =>
        withHeader(
          withParams(signedRead(), (p) => ({ ...p, components: [...p.components].reverse() })),
          'signature',
          'x',
        ),
      step: 'signature-input',
      reason: /required list/,
    },
    {
      rule: 'signature (wrong key) before nonce (used nonce)',
      request: () => signedRead('orderNo=1', { key: otherMerchantKey, nonce: usedNonce }),
      before: (_r, deps) => useNonce(deps),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'signature (wrong key) before envelope (unknown keyId)',
      request: () => signWriteWithKey(rawEnvelope(PLAINTEXT, { keyId: 'nope' }), otherMerchantKey),
      step: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'nonce (used) before envelope (unknown keyId)',
      request: () => signWriteBody(rawEnvelope(PLAINTEXT, { keyId: 'nope' }), { nonce: usedNonce }),
      before: (_r, deps) => useNonce(deps),
      step: 'nonce',
      reason: /used before/,
    },
  ]);

  it('a request refused at signature leaves its nonce unused', async () => {
    const deps = verifierDeps();
    const nonce = freshUuid();
    assertFailedAt(
      await verifyRequest(signedRead('orderNo=1', { key: otherMerchantKey, nonce }), deps),
      'signature',
      /does not verify/,
    );
    assert.ok((await verifyRequest(signedRead('orderNo=1', { nonce }), deps)).ok);
  });
});

it('sealEnvelope output signed as a write verifies end to end (fixture check)', async () => {
  const body = unwrap(sealEnvelope(PLAINTEXT, { keyId: BODY_KEY_ID, publicKey: bodyKey.publicKey }));
  assert.ok((await verifyRequest(signWriteBody(body), verifierDeps())).ok);
});
