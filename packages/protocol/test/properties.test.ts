// Property tests (fast-check): (a) a valid signed write or read stops verifying after any change
// to a covered component, a signature parameter (its value or its place) or a body byte; (b) every
// parser and verifier, fed arbitrary input, returns a typed result and never throws; (c) a request
// signed with its parameters in any order verifies with any optional whitespace RFC 8941 allows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  boxKeyPairFrom,
  boxPublicKeyFrom,
  contentDigest,
  decodeCanonicalBase64,
  ENVELOPE_ALG,
  type HeaderPair,
  parseEnvelope,
  parseSignature,
  parseSignatureInput,
  readSignatureInput,
  publicKeyFrom,
  type ReceivedRequest,
  type ReceivedWebhook,
  REQUEST_PROFILE,
  type RequestVerifierDeps,
  type SignatureParameter,
  type SignatureParams,
  serializeSignatureInput,
  serializeSignatureParams,
  signingKeyFrom,
  type VerificationStep,
  verifyContentDigest,
  verifyRequest,
  verifyWebhook,
  WEBHOOK_PROFILE,
  type WebhookCheck,
} from '@paygate/protocol';
import {
  headerOf,
  NOW,
  signedRead,
  signRaw,
  signedWebhook,
  signedWrite,
  type TestMerchant,
  unwrap,
  verifierDeps,
  webhookDeps,
  withHeader,
} from './support.js';

// Kept moderate so that the whole protocol suite stays within seconds on two cores.
const MUTATION_RUNS = 200;
const FUZZ_RUNS = 500;

/** Verification with a nonce store that always accepts, so that a failure is the mutation's. */
const deps = (): RequestVerifierDeps<TestMerchant> => verifierDeps({ consumeNonce: () => true });

/** A string near `original` (one character inserted, deleted or replaced) or anything else. */
function changed(original: string): fc.Arbitrary<string> {
  const at = fc.nat({ max: original.length });
  const char = fc.string({ unit: 'binary', minLength: 1, maxLength: 1 });
  return fc
    .oneof(
      fc.tuple(at, char).map(([i, c]) => original.slice(0, i) + c + original.slice(i)),
      at.map((i) => original.slice(0, i) + original.slice(i + 1)),
      fc.tuple(at, char).map(([i, c]) => original.slice(0, i) + c + original.slice(i + 1)),
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.constantFrom(original.toUpperCase(), original.toLowerCase(), ` ${original}`, `${original} `),
    )
    .filter((value) => value !== original);
}

/** The request with one covered component given another value. */
function withComponent(request: ReceivedRequest, component: string, value: string): ReceivedRequest {
  switch (component) {
    case '@method':
      return { ...request, method: value };
    case '@path':
      return { ...request, path: value };
    case '@query':
      // `value` is the raw query; the component is `?` + it.
      return { ...request, query: value };
    default:
      return withHeader(request, component, value);
  }
}

function componentValue(request: ReceivedRequest, component: string): string {
  if (component === '@method') return request.method;
  if (component === '@path') return request.path;
  if (component === '@query') return request.query ?? '';
  return headerOf(request, component);
}

const REQUEST_PARAMETERS: readonly SignatureParameter[] = ['created', 'expires', 'nonce', 'alg'];

/** The four request parameters in any order but `order`. */
const anotherOrder = (order: readonly SignatureParameter[]) =>
  fc
    .shuffledSubarray([...REQUEST_PARAMETERS], { minLength: 4, maxLength: 4 })
    .filter((shuffled) => shuffled.some((name, i) => name !== order[i]));

const STEPS: readonly VerificationStep[] = ['shape', 'digest', 'signature-input', 'signature', 'nonce', 'envelope'];

describe('(a) a signed request stops verifying after any change', () => {
  const fixtures: { kind: string; request: ReceivedRequest }[] = [
    { kind: 'write', request: signedWrite() },
    { kind: 'read', request: signedRead('orderNo=P1&merchantOrderNo=M%2F1&x=') },
  ];

  for (const { kind, request } of fixtures) {
    const params = unwrap(parseSignatureInput(headerOf(request, 'signature-input'), REQUEST_PROFILE));

    it(`${kind}: verifies unchanged (fixture)`, async () => {
      assert.ok((await verifyRequest(request, deps())).ok);
    });

    it(`${kind}: any covered component given another value`, async () => {
      const mutation = fc
        .constantFrom(...params.components)
        .chain((component) => fc.tuple(fc.constant(component), changed(componentValue(request, component))));
      await fc.assert(
        fc.asyncProperty(mutation, async ([component, value]) => {
          const result = await verifyRequest(withComponent(request, component, value), deps());
          assert.equal(result.ok, false, `${component} = ${JSON.stringify(value)} still verified`);
        }),
        { numRuns: MUTATION_RUNS },
      );
    });

    it(`${kind}: any signature parameter given another value`, async () => {
      const other = <T>(arbitrary: fc.Arbitrary<T>, original: T) => arbitrary.filter((value) => value !== original);
      const mutation: fc.Arbitrary<SignatureParams> = fc.oneof(
        other(fc.integer({ min: NOW - 900, max: NOW + 900 }), params.created).map((created) => ({
          ...params,
          created,
        })),
        other(fc.integer({ min: NOW - 900, max: NOW + 900 }), params.expires).map((expires) => ({
          ...params,
          expires,
        })),
        fc
          .tuple(
            other(fc.integer({ min: NOW - 299, max: NOW + 299 }), params.created),
            fc.integer({ min: 1, max: 300 }),
          )
          .map(([created, lifetime]) => ({ ...params, created, expires: created + lifetime })),
        other(fc.uuid({ version: 4 }), params.nonce).map((nonce) => ({ ...params, nonce })),
        fc.string({ minLength: 1, maxLength: 12 }).map((keyid) => ({ ...params, keyid })),
        other(fc.constantFrom('merchant', 'platform', 'sig1', 'm'), params.label).map((label) => ({
          ...params,
          label,
        })),
        anotherOrder(params.parameterOrder ?? REQUEST_PARAMETERS).map((parameterOrder) => ({
          ...params,
          parameterOrder,
        })),
      );
      await fc.assert(
        fc.asyncProperty(mutation, async (changedParams) => {
          const tampered = withHeader(request, 'signature-input', serializeSignatureInput(changedParams));
          const result = await verifyRequest(tampered, deps());
          assert.ok(!result.ok, `${JSON.stringify(changedParams)} still verified`);
          assert.ok(['signature-input', 'signature'].includes(result.error.step), result.error.step);
        }),
        { numRuns: MUTATION_RUNS },
      );
    });

    it(`${kind}: alg given any other value`, async () => {
      const header = headerOf(request, 'signature-input');
      await fc.assert(
        fc.asyncProperty(changed('ed25519'), async (alg) => {
          const tampered = withHeader(
            request,
            'signature-input',
            header.replace('alg="ed25519"', `alg=${JSON.stringify(alg)}`),
          );
          assert.equal((await verifyRequest(tampered, deps())).ok, false);
        }),
        { numRuns: MUTATION_RUNS },
      );
    });
  }

  const write = fixtures[0]?.request as ReceivedRequest;
  const byteChange = fc.tuple(fc.nat({ max: write.body.length - 1 }), fc.integer({ min: 1, max: 255 }));
  const changeByte = ([index, xor]: [number, number]) => {
    const body = Buffer.from(write.body);
    body[index] = (body[index] as number) ^ xor;
    return body;
  };

  it('write: any single body byte changed (Content-Digest as sent)', async () => {
    await fc.assert(
      fc.asyncProperty(byteChange, async (change) => {
        const result = await verifyRequest({ ...write, body: changeByte(change) }, deps());
        assert.ok(!result.ok && result.error.step === 'digest');
      }),
      { numRuns: MUTATION_RUNS },
    );
  });

  it('write: any single body byte changed, with Content-Digest recomputed to match', async () => {
    await fc.assert(
      fc.asyncProperty(byteChange, async (change) => {
        const body = changeByte(change);
        const result = await verifyRequest(
          withHeader({ ...write, body }, 'content-digest', contentDigest(body)),
          deps(),
        );
        assert.ok(!result.ok && result.error.step === 'signature');
      }),
      { numRuns: MUTATION_RUNS },
    );
  });

  it('write: any byte inserted into or removed from the body', async () => {
    const edit = fc.oneof(
      fc
        .tuple(fc.nat({ max: write.body.length }), fc.integer({ min: 0, max: 255 }))
        .map(([i, byte]) => Buffer.concat([write.body.subarray(0, i), Buffer.from([byte]), write.body.subarray(i)])),
      fc
        .nat({ max: write.body.length - 1 })
        .map((i) => Buffer.concat([write.body.subarray(0, i), write.body.subarray(i + 1)])),
    );
    await fc.assert(
      fc.asyncProperty(edit, async (body) => {
        assert.equal((await verifyRequest({ ...write, body }, deps())).ok, false);
      }),
      { numRuns: MUTATION_RUNS },
    );
  });
});

// --- (b) arbitrary input ----------------------------------------------------------------------

const anyString = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'binary-ascii', maxLength: 200 }),
);

/** Strings assembled from Structured Field tokens, so that parsing gets past the first byte. */
const sfLike = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'merchant',
        'platform',
        '=',
        '(',
        ')',
        ' ',
        ';',
        ',',
        ':',
        '"',
        '?1',
        '@',
        '%',
        '*',
        '"@method"',
        '"@path"',
        '"@query"',
        '"merchant-access-key"',
        '"content-digest"',
        'created=',
        'expires=',
        'nonce=',
        'alg=',
        'keyid=',
        '"ed25519"',
        '1767225600',
        '1767225900',
        '-1',
        '1.5',
        '999999999999999',
        '"f47ac10b-58cc-4372-a567-0e02b2c3d479"',
        ':AAAA:',
        ':',
        '\\',
      ),
      fc.string({ maxLength: 4 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

/** A valid header with a few characters replaced, inserted or removed. */
const nearValid = (valid: string) =>
  fc
    .array(fc.tuple(fc.nat({ max: valid.length }), fc.nat({ max: 2 }), fc.string({ unit: 'binary', maxLength: 2 })), {
      minLength: 1,
      maxLength: 4,
    })
    .map((edits) =>
      edits.reduce((text, [at, removed, inserted]) => text.slice(0, at) + inserted + text.slice(at + removed), valid),
    );

const sampleWrite = signedWrite();
const sampleWebhook = signedWebhook();

function assertTyped(result: unknown, kind: string): void {
  assert.equal(typeof result, 'object');
  const r = result as { ok: boolean; error?: { kind: string; reason: string } };
  assert.equal(typeof r.ok, 'boolean');
  if (!r.ok) {
    assert.equal(r.error?.kind, kind);
    assert.equal(typeof r.error?.reason, 'string');
  }
}

describe('(b) parsers and verifiers given arbitrary input return typed errors', () => {
  const inputHeader = fc.oneof(anyString, sfLike, nearValid(headerOf(sampleWrite, 'signature-input')));

  it('parseSignatureInput: a typed error, or a header that re-serializes to itself', () => {
    fc.assert(
      fc.property(inputHeader, fc.constantFrom(REQUEST_PROFILE, WEBHOOK_PROFILE), (header, profile) => {
        const result = parseSignatureInput(header, profile);
        assertTyped(result, 'invalid-signature-header');
        if (!result.ok) return;
        const serialized = serializeSignatureInput(result.value);
        // Requests may carry optional whitespace (their strings hold none); webhooks none at all.
        if (profile === WEBHOOK_PROFILE) assert.equal(serialized, header);
        else assert.equal(serialized, header.replace(/[ \t]/g, '').replace(/""/g, '" "'));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('parseSignature: a typed error, or 64 bytes', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, sfLike, nearValid(headerOf(sampleWrite, 'signature'))), (header) => {
        const result = parseSignature(header, 'merchant');
        assertTyped(result, 'invalid-signature-header');
        if (result.ok) assert.equal(result.value.length, 64);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('parseEnvelope: a typed error for any bytes', () => {
    const validText = Buffer.from(sampleWrite.body).toString('latin1');
    const jsonLike = fc
      .array(
        fc.constantFrom(
          '{',
          '}',
          '"',
          ':',
          ',',
          ' ',
          '1',
          '"version"',
          '"alg"',
          '"keyId"',
          '"ciphertext"',
          '\\u0000',
          '[',
          'null',
        ),
        {
          maxLength: 40,
        },
      )
      .map((parts) => Buffer.from(parts.join('')));
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      jsonLike,
      nearValid(validText).map((text) => Buffer.from(text, 'latin1')),
    );
    fc.assert(
      fc.property(bytes, fc.oneof(fc.constant(ENVELOPE_ALG), anyString), (body, contentEncryption) => {
        assertTyped(parseEnvelope(body, contentEncryption), 'invalid-envelope');
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('key loaders: a typed error for any string or bytes', () => {
    const pemLike = fc
      .tuple(
        fc.constantFrom('PRIVATE KEY', 'PUBLIC KEY', 'EC PRIVATE KEY', 'CERTIFICATE', 'ENCRYPTED PRIVATE KEY'),
        fc.uint8Array({ maxLength: 120 }),
        fc.boolean(),
      )
      .map(([label, der, prefix]) => {
        // Half the time, prefix the DER of an Ed25519 key so that the ASN.1 parser goes deeper.
        const head = Buffer.from(
          label.includes('PUBLIC') ? '302a300506032b6570032100' : '302e020100300506032b657004220420',
          'hex',
        );
        const body = Buffer.concat([prefix ? head : Buffer.alloc(0), der]).toString('base64');
        return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
      });
    const input = fc.oneof(
      anyString,
      pemLike,
      fc.uint8Array({ maxLength: 80 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
    );
    fc.assert(
      fc.property(input, (value) => {
        assertTyped(signingKeyFrom(value), 'invalid-key');
        assertTyped(publicKeyFrom(value), 'invalid-key');
        assertTyped(boxPublicKeyFrom(value), 'invalid-key');
        if (typeof value !== 'string') assertTyped(boxKeyPairFrom(value), 'invalid-key');
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('decodeCanonicalBase64: exactly the RFC 4648 grammar with zero trailing bits', () => {
    // The reference: padded standard alphabet, then the decoded bytes must re-encode unchanged.
    const GRAMMAR = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
    const alphabet = fc.constantFrom(
      ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
      '=',
      '-',
      '_',
      ' ',
      '\n',
      '\u00e9',
    );
    const text = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 24 }),
      fc.uint8Array({ maxLength: 24 }).chain((bytes) => nearValid(Buffer.from(bytes).toString('base64'))),
      fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString('base64')),
      anyString,
    );
    fc.assert(
      fc.property(text, (candidate) => {
        const decoded = decodeCanonicalBase64(candidate);
        const canonical = GRAMMAR.test(candidate) && Buffer.from(candidate, 'base64').toString('base64') === candidate;
        assert.equal(decoded !== undefined, canonical, JSON.stringify(candidate));
        if (decoded) assert.equal(decoded.toString('base64'), candidate);
      }),
      { numRuns: FUZZ_RUNS * 2 },
    );
  });

  it('verifyContentDigest: true only for the exact digest of the bytes', () => {
    const body = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(body, fc.oneof(anyString, nearValid(contentDigest(Buffer.from('{}')))), (bytes, header) => {
        assert.equal(verifyContentDigest(header, bytes), header === contentDigest(bytes));
        assert.equal(verifyContentDigest(contentDigest(bytes), bytes), true);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  const headerName = fc.oneof(
    fc.constantFrom(
      'merchant-access-key',
      'Signature-Input',
      'signature',
      'content-type',
      'content-encryption',
      'Content-Digest',
      'idempotency-key',
      'content-encoding',
      'content-length',
      'transfer-encoding',
      'webhook-event-id',
    ),
    fc.string({ maxLength: 12 }),
  );
  const headerList = fc.array(fc.tuple(headerName, anyString), { maxLength: 12 });
  /** Valid headers with some values replaced by arbitrary strings and some lines repeated. */
  const mutatedHeaders = (valid: readonly HeaderPair[]) =>
    fc
      .tuple(
        fc.array(fc.tuple(fc.nat({ max: valid.length - 1 }), anyString), { maxLength: 3 }),
        fc.array(
          headerName.chain((n) => fc.tuple(fc.constant(n), anyString)),
          { maxLength: 2 },
        ),
      )
      .map(([replacements, extra]): HeaderPair[] => {
        const headers = valid.map(([name, value]): HeaderPair => [name, value]);
        for (const [i, value] of replacements) headers[i] = [(headers[i] as HeaderPair)[0], value];
        return [...headers, ...extra];
      });

  it('verifyRequest: resolves to a failure naming a step, never throws', async () => {
    const request = fc.record({
      method: fc.oneof(fc.constantFrom('GET', 'POST', 'PUT'), anyString),
      path: fc.oneof(fc.constant('/api/v1/payments'), anyString),
      query: fc.option(anyString, { nil: undefined }),
      headers: fc.oneof(headerList, mutatedHeaders(sampleWrite.headers as readonly HeaderPair[])),
      body: fc.oneof(fc.uint8Array({ maxLength: 200 }), fc.constant(sampleWrite.body)),
    });
    await fc.assert(
      fc.asyncProperty(request, async (received) => {
        const result = await verifyRequest(received, deps());
        assert.equal(typeof result.ok, 'boolean');
        if (!result.ok) assert.ok(STEPS.includes(result.error.step), result.error.step);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('verifyWebhook: resolves to a failure naming a check, never throws', async () => {
    const checks: readonly WebhookCheck[] = [
      'shape',
      'digest',
      'event-id',
      'signature-input',
      'nonce',
      'keyid',
      'signature',
    ];
    const webhook: fc.Arbitrary<ReceivedWebhook> = fc.record({
      method: fc.option(fc.oneof(fc.constant('POST'), anyString), { nil: undefined }),
      path: fc.oneof(fc.constant(sampleWebhook.path), anyString),
      query: fc.option(anyString, { nil: undefined }),
      headers: fc.oneof(headerList, mutatedHeaders(sampleWebhook.headers as readonly HeaderPair[])),
      body: fc.oneof(
        fc.uint8Array({ maxLength: 200 }),
        fc.constant(sampleWebhook.body),
        anyString.map((s) => Buffer.from(s)),
      ),
    });
    await fc.assert(
      fc.asyncProperty(webhook, async (received) => {
        const result = await verifyWebhook(received, webhookDeps());
        assert.equal(typeof result.ok, 'boolean');
        if (!result.ok) assert.ok(checks.includes(result.error.check), result.error.check);
      }),
      { numRuns: FUZZ_RUNS },
    );
  });
});

describe('(c) a request signed as other signers write it verifies', () => {
  const spaces = fc.constantFrom('', ' ', '  ');
  const whitespace = fc.record({
    lead: spaces,
    open: spaces,
    between: fc.array(spaces, { minLength: 6, maxLength: 6 }),
    close: spaces,
    afterSemicolon: fc.array(spaces, { minLength: 4, maxLength: 4 }),
    trail: spaces,
  });
  type Whitespace = typeof whitespace extends fc.Arbitrary<infer T> ? T : never;

  /** The canonical header with optional whitespace added where RFC 8941 allows it. */
  function spaced(header: string, ws: Whitespace): string {
    let between = 0;
    let semicolon = 0;
    const text = header
      .replace('(', `(${ws.open}`)
      .replace(')', `${ws.close})`)
      .replaceAll('" "', () => `" ${ws.between[between++] ?? ''}"`)
      .replaceAll(';', () => `;${ws.afterSemicolon[semicolon++] ?? ''}`);
    return `${ws.lead}${text}${ws.trail}`;
  }

  /** The fixture signed again with its parameters in `order`. */
  function resigned(request: ReceivedRequest, order: readonly SignatureParameter[]): ReceivedRequest {
    const params = unwrap(parseSignatureInput(headerOf(request, 'signature-input'), REQUEST_PROFILE));
    const headers = Object.fromEntries(
      (request.headers as (readonly [string, string])[]).filter(([name]) => !name.startsWith('signature')),
    );
    return signRaw({ ...request, headers }, { ...params, parameterOrder: order });
  }

  for (const [kind, request] of [
    ['write', signedWrite()],
    ['read', signedRead('orderNo=P1&x=')],
  ] as const) {
    it(`${kind}: any parameter order, any optional whitespace`, async () => {
      const order = fc.shuffledSubarray([...REQUEST_PARAMETERS], { minLength: 4, maxLength: 4 });
      await fc.assert(
        fc.asyncProperty(order, whitespace, async (parameterOrder, ws) => {
          const signed = resigned(request, parameterOrder);
          const sent = withHeader(signed, 'signature-input', spaced(headerOf(signed, 'signature-input'), ws));
          const result = await verifyRequest(sent, deps());
          assert.ok(result.ok, JSON.stringify(headerOf(sent, 'signature-input')));
          // The base's last line is taken from the strict parse: the canonical member, as a signer writes it.
          const read = unwrap(readSignatureInput(headerOf(sent, 'signature-input'), REQUEST_PROFILE));
          assert.equal(read.signatureParams, serializeSignatureParams(read.params));
          assert.deepEqual(read.params.parameterOrder ?? REQUEST_PARAMETERS, parameterOrder);
        }),
        { numRuns: MUTATION_RUNS },
      );
    });
  }
});
