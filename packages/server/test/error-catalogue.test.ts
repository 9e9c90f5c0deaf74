import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, STATUS_CODES } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { declareErrors, type ErrorKind } from '../src/errors.js';
import {
  CATALOGUE,
  ERROR_CODES,
  type ErrorCode,
  MERCHANT_API_ERROR_CODES,
  mergeCatalogue,
  writeError,
} from '../src/http/errors.js';
import { Metrics } from '../src/observability/metrics.js';
import { openApiDocument } from '../src/openapi/document.js';
import { serveWorkerMetrics } from '../src/worker/metrics-server.js';
import { sharedFile } from '../../protocol/test/shared-files.js';
import { databases, startTestPlatform, type TestPlatform } from './harness.js';

const SRC = new URL('../src/', import.meta.url).pathname;
/**
 * decisions.md: the shared one (see sharedFile), else the copy committed with these tests (a clone
 * elsewhere). Where the shared one is found, the copy must equal it, so it cannot drift unseen.
 */
const SHARED_DECISIONS = sharedFile('spec/decisions.md');
const DECISIONS_COPY = new URL('fixtures/decisions.md', import.meta.url).pathname;
const DECISIONS = SHARED_DECISIONS ?? DECISIONS_COPY;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * What a hand-written failure looks like: an error status passed to a reply or a raw response,
 * or set on an error or result, and a failure body spelled out (`msg` other than SUCCESS). The
 * catalogue's merge (http/errors.ts) and the declarations (`errors.ts` files, where `status:` is
 * the point) are the only places allowed to name an error status.
 */
const HAND_WRITTEN = [
  { rule: 'error status on a reply', pattern: /\.(?:code|status)\(\s*[45]\d\d\b/ },
  { rule: 'error status on a raw response', pattern: /writeHead\(\s*[45]\d\d\b/ },
  { rule: 'error status set on an object', pattern: /\b(?:statusCode|status)\s*[:=]\s*[45]\d\d\b/ },
  { rule: 'failure body written by hand', pattern: /\bmsg\s*:\s*['"`](?!SUCCESS['"`])/ },
  { rule: 'failure body written by hand (JSON text)', pattern: /\\?"msg\\?"\s*:\s*\\?"(?!SUCCESS)/ },
];

function findHandWritten(text: string, declarations: boolean): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const { rule, pattern } of HAND_WRITTEN) {
      if (declarations && rule === 'error status set on an object') continue;
      if (pattern.test(line)) found.push(`${index + 1}: ${rule}: ${line.trim()}`);
    }
  });
  return found;
}

describe('the error catalogue', () => {
  it('the scan recognises hand-written failures (so that finding none means something)', () => {
    const samples = [
      "return reply.code(404).send({ msg: 'NOT_FOUND', message: 'no such path' });",
      "response.writeHead(503, { 'content-type': 'application/json' });",
      'response.end(\'{"msg":"NOT_READY"}\');',
      "if (fresh.rows.length === 0) return { status: 401, reason: 'replayed_nonce' };",
      'Object.assign(error, { statusCode: 400 });',
    ];
    for (const sample of samples) assert.notDeepEqual(findHandWritten(sample, false), [], sample);
    assert.deepEqual(findHandWritten("return success({ status: 'ok' }); // { msg: 'SUCCESS' }", false), []);
  });

  it('no source file outside the catalogue writes an error status or a failure body by hand', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const name = relative(SRC, file);
      // The catalogue itself, and the OpenAPI document, which describes bodies rather than sends them.
      if (name === join('http', 'errors.ts') || name.startsWith('openapi') || name.endsWith('openapi.ts')) continue;
      const declarations = name.endsWith('errors.ts');
      for (const hit of findHandWritten(readFileSync(file, 'utf8'), declarations)) offenders.push(`${name}:${hit}`);
    }
    assert.deepEqual(offenders, [], 'answer failures with a DomainError or the send helpers of http/errors.ts');
  });

  it('holds every code once, each with an HTTP error status', () => {
    assert.ok(ERROR_CODES.length > 0);
    for (const code of ERROR_CODES) {
      const spec = CATALOGUE[code];
      assert.match(code, /^[A-Z][A-Z_]*[A-Z]$/);
      assert.ok(spec.status >= 400 && spec.status <= 599 && STATUS_CODES[spec.status], `${code}: ${spec.status}`);
      assert.ok(spec.message.length > 0, code);
    }
    const a = declareErrors({ SOME_CODE: { status: 409, message: 'a', kind: 'private' } });
    const b = declareErrors({ SOME_CODE: { status: 400, message: 'b', kind: 'private' } });
    assert.throws(() => mergeCatalogue(a, b), /SOME_CODE is declared twice/);
  });
});

/** Every response of every operation (and webhook) of the document, as [status, description]. */
function documentedResponses(document: Record<string, unknown>): [string, string][] {
  const found: [string, string][] = [];
  const visit = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    const responses = (node as { responses?: unknown }).responses;
    if (typeof responses === 'object' && responses !== null) {
      for (const [status, response] of Object.entries(responses)) {
        found.push([status, String((response as { description?: unknown }).description ?? '')]);
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(document.paths);
  visit(document.webhooks);
  return found;
}

/** The status and code pairs of decisions.md's fixed Responses section. */
function decisionsResponses(): Map<string, number> {
  const text = readFileSync(DECISIONS, 'utf8');
  const start = text.indexOf('## Responses (fixed)');
  assert.ok(start >= 0, 'decisions.md has a Responses section');
  const section = text.slice(start, text.indexOf('\n## ', start + 1));
  const pairs = new Map<string, number>();
  for (const match of section.matchAll(/\b(\d{3})\s+`([A-Z_]+)`/g)) pairs.set(match[2] as string, Number(match[1]));
  for (const match of section.matchAll(/HTTP (\d{3}), `\{"msg": "([A-Z_]+)"\}`/g)) {
    pairs.set(match[2] as string, Number(match[1]));
  }
  return pairs;
}

describe("the tests' copy of decisions.md", () => {
  it(
    'equals the shared one where that is found',
    { skip: !SHARED_DECISIONS && 'no shared spec beside this checkout' },
    () => {
      assert.equal(
        readFileSync(DECISIONS_COPY, 'utf8'),
        readFileSync(SHARED_DECISIONS as string, 'utf8'),
        `packages/server/test/fixtures/decisions.md differs from ${SHARED_DECISIONS}: copy it again`,
      );
    },
  );
});

describe('every catalogue code is documented where its kind says', () => {
  const document = openApiDocument();
  const schemas = (document.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
  const listed = new Set([
    ...((schemas.Error?.properties.msg as { enum: string[] }).enum ?? []),
    (schemas.Unauthorized?.properties.msg as { const: string }).const,
  ]);
  const responses = documentedResponses(document);
  const mentions = (code: string) => new RegExp(`\\b${code}\\b`);
  const byKind = (kind: ErrorKind) => ERROR_CODES.filter((code) => CATALOGUE[code].kind === kind);

  it("the OpenAPI document's msg list is exactly the codes the merchant API can answer", () => {
    assert.deepEqual([...listed].sort(), [...MERCHANT_API_ERROR_CODES].sort());
    for (const code of listed) assert.ok(ERROR_CODES.includes(code as ErrorCode), `${code} is not in the catalogue`);
  });

  it('business and API codes are documented among the operations’ responses at their status', () => {
    for (const code of [...byKind('business'), ...byKind('api')]) {
      const status = String(CATALOGUE[code].status);
      const at = responses.filter(([s, description]) => s === status && mentions(code).test(description));
      assert.ok(at.length > 0, `no ${status} response of the OpenAPI document names ${code}`);
      const elsewhere = responses.filter(([s, description]) => s !== status && mentions(code).test(description));
      assert.deepEqual(elsewhere, [], `${code} is documented under another status than ${status}`);
    }
  });

  it('business codes are the fixed list of decisions.md, with the same statuses', () => {
    const fixed = decisionsResponses();
    assert.deepEqual([...fixed.keys()].sort(), [...byKind('business')].sort());
    for (const [code, status] of fixed) assert.equal(CATALOGUE[code as ErrorCode].status, status, code);
  });

  it('transport codes (HTTP-level, any path) are in the msg list; private ones appear nowhere in the document', () => {
    assert.deepEqual(byKind('transport').sort(), [
      'BAD_REQUEST',
      'NOT_IMPLEMENTED',
      'NOT_READY',
      'REQUEST_HEADER_FIELDS_TOO_LARGE',
      'REQUEST_TIMEOUT',
      'SERVICE_UNAVAILABLE',
    ]);
    for (const code of byKind('transport')) assert.ok(listed.has(code), code);
    const text = JSON.stringify(document);
    for (const code of byKind('private')) assert.ok(!mentions(code).test(text), `${code} is not the merchant API's`);
  });
});

/** A request over a raw socket (to send what fetch refuses to: a repeated header). */
function rawRequest(url: string, head: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(head));
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

for (const database of databases()) {
  describe(`every scope answers its failures from the catalogue (${database})`, () => {
    let platform: TestPlatform;
    before(async () => {
      platform = await startTestPlatform({ database });
    });
    after(() => platform.close());

    /** The answer's status is the catalogue's for its `msg`, and its body is exactly `expected`. */
    async function answers(response: Response, expected: Record<string, unknown>) {
      const text = await response.text();
      assert.deepEqual(JSON.parse(text), expected);
      assert.equal(response.status, CATALOGUE[expected.msg as ErrorCode].status, text);
      assert.ok(response.headers.get('request-id')?.startsWith('req_'));
    }

    it('the platform, the merchant API and the operator API; authentication failures are msg alone', async () => {
      await answers(await fetch(`${platform.url}/nowhere`), { msg: 'NOT_FOUND', message: 'no such path' });
      const unsigned = await fetch(`${platform.url}/api/v1/payments?orderNo=P000000000000000001`);
      assert.equal(unsigned.headers.get('content-length'), String('{"msg":"UNAUTHORIZED"}'.length));
      await answers(unsigned, { msg: 'UNAUTHORIZED' });
      await answers(await fetch(`${platform.url}/admin/v1/merchants`), { msg: 'UNAUTHORIZED' });
      const badToken = { authorization: 'Bearer not-the-token' };
      await answers(await fetch(`${platform.url}/admin/v1/merchants`, { headers: badToken }), { msg: 'UNAUTHORIZED' });
      const admin = { authorization: `Bearer ${platform.config.adminToken}` };
      await answers(await fetch(`${platform.url}/admin/v1/channels/nope/notifications`, { headers: admin }), {
        msg: 'NOT_FOUND',
        message: 'no such channel',
      });
    });

    it('channel notifications, the portal API, the cashier page and the HTTP layer', async () => {
      const notify = (name: string) =>
        fetch(`${platform.url}/channels/${name}/notifications`, { method: 'POST', body: '{}' });
      await answers(await notify('nope'), { msg: 'NOT_FOUND', message: 'no such channel' });
      // A configured channel's refused notification is the bare UNAUTHORIZED (channels.test.ts).

      await answers(await fetch(`${platform.url}/portal/api/session`), {
        msg: 'UNAUTHORIZED',
        message: 'sign in first',
      });
      const crossSite = await fetch(`${platform.url}/portal/api/session`, {
        method: 'POST',
        headers: { origin: 'https://elsewhere.example', 'content-type': 'application/json' },
        body: '{}',
      });
      await answers(crossSite, { msg: 'CSRF_REJECTED', message: 'cross-origin request refused' });
      const notJson = await fetch(`${platform.url}/portal/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":',
      });
      await answers(notJson, { msg: 'BAD_REQUEST', message: 'the request is malformed' });

      const cashier = await fetch(`${platform.url}/cashier/P000000000000000001`);
      assert.equal(cashier.status, CATALOGUE.ORDER_NOT_FOUND.status);
      assert.match(await cashier.text(), /Payment not found/);

      const repeated = await rawRequest(
        platform.url,
        'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n',
      );
      assert.equal(repeated.status, CATALOGUE.BAD_REQUEST.status);
      assert.deepEqual(JSON.parse(repeated.body), { msg: 'BAD_REQUEST', message: 'header host is repeated' });
    });
  });
}

describe('answers outside Fastify come from the catalogue too', () => {
  it("the worker's listener: an unknown path is the bare NOT_FOUND", async () => {
    const listener = await serveWorkerMetrics(
      new Metrics(async () => ({ pending: 0, oldestPendingAgeSeconds: 0 })),
      '127.0.0.1',
      0,
    );
    try {
      const other = await fetch(`http://127.0.0.1:${listener.port}/other`);
      assert.equal(other.status, CATALOGUE.NOT_FOUND.status);
      assert.equal(await other.text(), '{"msg":"NOT_FOUND"}');
      const health = await fetch(`http://127.0.0.1:${listener.port}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), '{"msg":"SUCCESS","data":{"status":"ok"}}');
    } finally {
      await listener.close();
    }
  });

  it('writeError: the status of the code, the bare body and the headers asked for (the platform before its app exists)', async () => {
    const server = createServer((_request, response) =>
      writeError(response, 'NOT_READY', { headers: { connection: 'close' }, retryAfterSeconds: 1 }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(response.status, 503);
      assert.equal(response.headers.get('retry-after'), '1');
      assert.equal(response.headers.get('content-type'), 'application/json');
      assert.equal(await response.text(), '{"msg":"NOT_READY"}');
    } finally {
      server.close();
    }
  });
});
