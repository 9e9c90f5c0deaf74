// Throughput of request verification against the raw cost of the primitives it is built on,
// measured in the same run: a full write (digest + Signature-Input + Ed25519 + envelope open)
// and a read (Signature-Input + Ed25519), then Ed25519 verification with sodium-native and with
// node:crypto. Prints ratios only; asserts no time. Run: node scripts/bench.mjs protocol
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import sodium from 'sodium-native';
import {
  generateBoxKeyPair,
  generateSigningKey,
  type MerchantKeys,
  type ReceivedRequest,
  type RequestVerifierDeps,
  type SignedRequest,
  signingKeyToPem,
  signReadRequest,
  signWriteRequest,
  verifyRequest,
} from '@paygate/protocol';

/** Length of one timed slice, and how many interleaved rounds each measurement gets (median). */
const SLICE_MS = Number(process.env.BENCH_SLICE_MS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const ACCESS_KEY = 'ak_test_Bench0000001';
const BODY_KEY_ID = 'body-bench';
const CREATED = 1_767_225_600;

const merchantKey = generateSigningKey();
const box = generateBoxKeyPair();

/**
 * The verifier's dependencies: constant lookups and a nonce store that always accepts, so that
 * the measured cost is the protocol's own (a real store adds its round trip).
 */
const deps: RequestVerifierDeps<MerchantKeys> = {
  now: CREATED + 10,
  lookupMerchant: () => ({ publicKeys: [merchantKey.publicKey] }),
  consumeNonce: () => true,
  lookupBodyKey: () => box,
};

function paymentJson(size: number): Buffer {
  const order = {
    merchantOrderNo: 'M-20260101-000001',
    currency: 'BRL',
    amount: '125.50',
    paymentMethod: { code: 'PIX' },
    webhookUrl: 'https://merchant.example/webhook/payment',
    attach: '',
  };
  const base = JSON.stringify(order).length;
  return Buffer.from(JSON.stringify({ ...order, attach: 'x'.repeat(Math.max(0, size - base)) }), 'utf8');
}

function received(method: string, query: string | undefined, signed: SignedRequest): ReceivedRequest {
  return {
    method,
    path: '/api/v1/payments',
    query,
    headers: Object.entries(signed.headers),
    body: signed.body ?? Buffer.alloc(0),
  };
}

function writeFixture(plaintextBytes: number) {
  const plaintext = paymentJson(plaintextBytes);
  const signed = signWriteRequest(
    {
      path: '/api/v1/payments',
      plaintext,
      bodyKey: { keyId: BODY_KEY_ID, publicKey: box.publicKey },
      idempotencyKey: '9b2b8a51-6a3e-4d6e-9f0a-6c1d2e3f4a5b',
    },
    { accessKey: ACCESS_KEY, key: merchantKey, created: CREATED, nonce: 'f47ac10b-58cc-4372-a567-0e02b2c3d479' },
  );
  const request = received('POST', undefined, signed);
  const envelope = JSON.parse(signed.body.toString('utf8')) as { ciphertext: string };
  return {
    request,
    plaintext,
    wireBody: signed.body,
    base: Buffer.from(signed.signatureBase, 'utf8'),
    signature: signatureBytes(signed),
    sealed: Buffer.from(envelope.ciphertext, 'base64'),
  };
}

function signatureBytes(signed: SignedRequest): Buffer {
  const match = /^merchant=:([A-Za-z0-9+/=]+):$/.exec(signed.headers.signature ?? '');
  if (!match?.[1]) throw new Error('signature header');
  return Buffer.from(match[1], 'base64');
}

// --- primitives, one call each ---------------------------------------------------------------

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();
const sodiumVerify = (signature: Buffer, message: Buffer) =>
  sodium.crypto_sign_verify_detached(signature, message, merchantKey.publicKey);
const nodePublicKey = createPublicKey(signingKeyToPem(merchantKey).publicKeyPem);
const nodeCryptoVerify = (signature: Buffer, message: Buffer) => nodeVerify(null, message, nodePublicKey, signature);
function sealOpen(sealed: Buffer, out: Buffer): boolean {
  return sodium.crypto_box_seal_open(out, sealed, box.publicKey, box.secretKey);
}

// --- timing -------------------------------------------------------------------------------------

type Operation = { readonly name: string; readonly run: () => unknown; readonly async?: boolean };

async function slice(op: Operation): Promise<number> {
  const batch = op.async ? 16 : 64;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(SLICE_MS) * 1_000_000n;
  let now = start;
  let count = 0;
  while (now < deadline) {
    if (op.async) for (let i = 0; i < batch; i++) await op.run();
    else for (let i = 0; i < batch; i++) op.run();
    count += batch;
    now = process.hrtime.bigint();
  }
  return (count * 1e9) / Number(now - start);
}

/** Operations per second of each operation: the median of ROUNDS slices, interleaved. */
async function measure(ops: readonly Operation[]): Promise<Map<string, number>> {
  for (const op of ops) {
    const warm = op.async ? 200 : 1000;
    for (let i = 0; i < warm; i++) await op.run();
  }
  const samples = new Map<string, number[]>(ops.map((op) => [op.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const op of ops) samples.get(op.name)?.push(await slice(op));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}

// --- fixtures, checked once before timing ------------------------------------------------------

const small = writeFixture(200);
const large = writeFixture(64 * 1024);
const readSigned = signReadRequest(
  { path: '/api/v1/payments', query: 'orderNo=P202601010001' },
  { accessKey: ACCESS_KEY, key: merchantKey, created: CREATED, nonce: 'c0ffee00-1234-4abc-8def-0123456789ab' },
);
const read = {
  request: received('GET', 'orderNo=P202601010001', readSigned),
  base: Buffer.from(readSigned.signatureBase, 'utf8'),
  signature: signatureBytes(readSigned),
};

for (const fixture of [small, large]) {
  const result = await verifyRequest(fixture.request, deps);
  if (!result.ok || !result.value.plaintext?.equals(fixture.plaintext))
    throw new Error('write fixture does not verify');
  const out = Buffer.alloc(fixture.plaintext.length);
  if (!sodiumVerify(fixture.signature, fixture.base) || !sealOpen(fixture.sealed, out)) throw new Error('primitives');
}
if (!(await verifyRequest(read.request, deps)).ok) throw new Error('read fixture does not verify');
if (!nodeCryptoVerify(read.signature, read.base)) throw new Error('node:crypto verify');

function writeOperations(label: string, fixture: typeof small): Operation[] {
  const out = Buffer.alloc(fixture.plaintext.length);
  return [
    { name: `${label}: verifyRequest`, run: () => verifyRequest(fixture.request, deps), async: true },
    {
      name: `${label}: raw primitives`,
      run: () => {
        sha256(fixture.wireBody);
        sodiumVerify(fixture.signature, fixture.base);
        sealOpen(fixture.sealed, out);
      },
    },
    { name: `${label}: sha-256`, run: () => sha256(fixture.wireBody) },
    { name: `${label}: Ed25519 verify`, run: () => sodiumVerify(fixture.signature, fixture.base) },
    { name: `${label}: crypto_box_seal_open`, run: () => sealOpen(fixture.sealed, out) },
  ];
}

const operations: Operation[] = [
  ...writeOperations('write', small),
  ...writeOperations('write 64 KiB', large),
  { name: 'read: verifyRequest', run: () => verifyRequest(read.request, deps), async: true },
  { name: 'read: Ed25519 verify', run: () => sodiumVerify(read.signature, read.base) },
  { name: 'ed25519: sodium-native', run: () => sodiumVerify(read.signature, read.base) },
  { name: 'ed25519: node:crypto', run: () => nodeCryptoVerify(read.signature, read.base) },
];

const started = Date.now();
const rate = await measure(operations);
const get = (name: string) => rate.get(name) as number;

// --- report -----------------------------------------------------------------------------------

const fmtRate = (value: number) => Math.round(value).toLocaleString('en-US').padStart(11);
const fmtUs = (value: number) => (1e6 / value).toFixed(2).padStart(9);
const row = (name: string, value: number, note = '') =>
  console.log(`  ${name.padEnd(44)}${fmtRate(value)}/s${fmtUs(value)} µs  ${note}`);

console.log(
  `protocol verification, node ${process.version}, ${process.arch}; median of ${ROUNDS} interleaved ${SLICE_MS} ms slices`,
);
console.log("(nonce store and key lookups are constant in-memory functions: the cost below is the protocol's own)\n");

for (const [label, fixture] of [
  ['write', small],
  ['write 64 KiB', large],
] as const) {
  const full = get(`${label}: verifyRequest`);
  const raw = get(`${label}: raw primitives`);
  console.log(
    `${label} request: plaintext ${fixture.plaintext.length} B, wire body ${fixture.wireBody.length} B, signature base ${fixture.base.length} B`,
  );
  row('verifyRequest (shape→digest→input→Ed25519→open)', full);
  row('raw primitives in sequence', raw, `verifyRequest costs ${(raw / full).toFixed(2)}× the raw primitives`);
  row(`  sha-256 over the wire body`, get(`${label}: sha-256`));
  row(`  Ed25519 verify of the base (sodium-native)`, get(`${label}: Ed25519 verify`));
  row(`  crypto_box_seal_open (${fixture.sealed.length} B)`, get(`${label}: crypto_box_seal_open`));
  console.log(`  protocol overhead beyond the primitives: ${(1e6 / full - 1e6 / raw).toFixed(2)} µs per request\n`);
}

const readFull = get('read: verifyRequest');
const readRaw = get('read: Ed25519 verify');
console.log(`read request: signature base ${read.base.length} B`);
row('verifyRequest (shape→input→Ed25519)', readFull);
row(
  'raw Ed25519 verify (sodium-native)',
  readRaw,
  `verifyRequest costs ${(readRaw / readFull).toFixed(2)}× the raw verify`,
);
console.log(
  `  protocol overhead beyond the primitive: ${(1e6 / readFull - 1e6 / readRaw).toFixed(2)} µs per request\n`,
);

const viaSodium = get('ed25519: sodium-native');
const viaNode = get('ed25519: node:crypto');
console.log(`Ed25519 verify of the ${read.base.length}-byte read base`);
row('sodium-native crypto_sign_verify_detached', viaSodium);
row('node:crypto verify (KeyObject)', viaNode, `sodium-native / node:crypto = ${(viaSodium / viaNode).toFixed(2)}×`);
console.log(`\nmeasured in ${((Date.now() - started) / 1000).toFixed(1)} s`);
