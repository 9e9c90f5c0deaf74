/**
 * Every operation of the served reference has an example request and response, and every example
 * is valid against its schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it): a sealed write's
 * envelope opens to its plaintext example, each write shows a VALIDATION_FAILED answer, and every
 * signed operation links to the signing recipe, which is shown once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { boxKeyPairFrom, openEnvelope, parseEnvelope } from '@paygate/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OPERATION_EXAMPLES } from '../src/openapi/examples.js';
import { SIGNING_RECIPE_LINK } from '../src/openapi/merge-examples.js';
import { createMerchant, get, post, startTestPlatform, type TestPlatform } from './harness.js';

// The body key's secret half from the shared protocol vectors (test data, not in the reference).
const BODY_SECRET_KEY = 'Q+RTxyJzi12lTJg1MSP9T4CM7wDN9YtgCeDosF+ArN0=';

type Json = Record<string, unknown>;
interface Media {
  schema: Json;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  operationId?: string;
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; schema?: Json; example?: unknown }[];
  requestBody?: {
    description?: string;
    content: Record<string, Media>;
    'x-plaintext'?: Json;
    'x-plaintext-examples'?: unknown[];
  };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  info: { description: string };
  components: { schemas: Record<string, Json> };
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
}

/** Ajv over the document's component schemas; `#/components/schemas/…` references resolve. */
function validatorFor(document: Document) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  ajv.addKeyword('example');
  // The document's references (`#/components/schemas/…`), pointed at the same schemas under $defs.
  const rebase = (schema: unknown): unknown =>
    JSON.parse(
      JSON.stringify(schema).replaceAll('"#/components/schemas/', '"https://paygate.invalid/openapi.json#/$defs/'),
    );
  ajv.addSchema(rebase({ $id: 'https://paygate.invalid/openapi.json', $defs: document.components.schemas }) as Json);
  return (schema: Json, value: unknown): string[] => {
    const validate = ajv.compile(rebase(schema) as Json);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  };
}

describe('examples in the served OpenAPI document', () => {
  let platform: TestPlatform;
  let document: Document;
  let validate: ReturnType<typeof validatorFor>;
  const operations: [string, Operation][] = [];
  before(async () => {
    platform = await startTestPlatform();
    const response = await fetch(`${platform.url}/openapi.json`);
    assert.equal(response.status, 200);
    document = (await response.json()) as Document;
    validate = validatorFor(document);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item))
        operations.push([`${method.toUpperCase()} ${path}`, operation]);
    }
    for (const [name, item] of Object.entries(document.webhooks)) {
      for (const [method, operation] of Object.entries(item)) operations.push([`webhook ${name} ${method}`, operation]);
    }
  });
  after(() => platform.close());

  it('covers every operation, each with a unique operationId', () => {
    assert.ok(operations.length >= 23, `only ${operations.length} operations`);
    const ids = operations.map(([, operation]) => operation.operationId);
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id)),
      JSON.stringify(ids),
    );
    assert.equal(new Set(ids).size, ids.length);
  });

  it('every request body has an example valid against its schema; a sealed one opens to its plaintext example', () => {
    const pair = boxKeyPairFrom(Buffer.from(BODY_SECRET_KEY, 'base64'));
    assert.ok(pair.ok);
    const problems: string[] = [];
    for (const [name, operation] of operations) {
      const body = operation.requestBody;
      if (!body) continue;
      for (const [type, media] of Object.entries(body.content)) {
        const examples = Object.values(media.examples ?? {});
        if (examples.length === 0) problems.push(`${name} ${type}: no request example`);
        for (const example of examples) {
          for (const error of validate(media.schema, example.value)) problems.push(`${name} request: ${error}`);
        }
      }
      const plaintext = body['x-plaintext'];
      if (!plaintext) continue;
      const [sealed] = body['x-plaintext-examples'] ?? [];
      if (sealed === undefined) {
        problems.push(`${name}: no plaintext example`);
        continue;
      }
      for (const error of validate(plaintext, sealed)) problems.push(`${name} plaintext: ${error}`);
      assert.match(body.description ?? '', /Sealed inside, for example:\n\n```json\n/, `${name} shows its plaintext`);
      for (const example of Object.values(body.content['application/json']?.examples ?? {})) {
        const envelope = parseEnvelope(
          Buffer.from(JSON.stringify(example.value)),
          'sealedbox-v1-x25519-xsalsa20poly1305',
        );
        assert.ok(envelope.ok, name);
        const opened = openEnvelope(envelope.value, () => pair.value);
        assert.ok(
          opened.ok,
          `${name}: the example envelope does not open (reseal it: JSON.stringify of the plaintext)`,
        );
        assert.equal(
          opened.value.toString('utf8'),
          JSON.stringify(sealed),
          `${name}: the envelope seals another plaintext`,
        );
      }
    }
    assert.deepEqual(problems, []);
  });

  it('every answer with a body has an example valid against its schema, the success answer included', () => {
    const problems: string[] = [];
    for (const [name, operation] of operations) {
      const success = Object.keys(operation.responses).filter((status) => /^2/.test(status));
      assert.ok(success.length > 0, `${name} has no success answer`);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const examples = Object.values(media.examples ?? {});
          if (examples.length === 0) problems.push(`${name} ${status} ${type}: no example`);
          for (const example of examples) {
            for (const error of validate(media.schema, example.value)) problems.push(`${name} ${status}: ${error}`);
          }
        }
      }
      if (name.startsWith('webhook ')) continue;
      const ok = operation.responses['200']?.content?.['application/json']?.examples;
      assert.ok(ok && Object.keys(ok).length > 0, `${name}: no 200 example`);
    }
    assert.deepEqual(problems, []);
  });

  it('every write shows a VALIDATION_FAILED answer with the field at fault', () => {
    for (const [name, operation] of operations) {
      if (!name.startsWith('POST /')) continue;
      const examples = Object.values(operation.responses['400']?.content?.['application/json']?.examples ?? {});
      const failed = examples.map((e) => e.value as { msg?: string; errors?: unknown[]; message?: string });
      assert.ok(
        failed.some((body) => body.msg === 'VALIDATION_FAILED' && (body.errors?.length || body.message)),
        `${name}: no VALIDATION_FAILED example`,
      );
    }
  });

  it('every read with query parameters shows example values, valid against their schemas', () => {
    const problems: string[] = [];
    for (const [name, operation] of operations) {
      const parameters = (operation.parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path');
      if (parameters.length === 0) continue;
      if (!parameters.some((p) => p.example !== undefined)) problems.push(`${name}: no parameter example`);
      for (const parameter of parameters) {
        if (parameter.example === undefined) continue;
        for (const error of validate(parameter.schema ?? {}, parameter.example)) {
          problems.push(`${name} ${parameter.name}: ${error}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('the signing recipe is shown once, and every signed operation links to it', () => {
    const text = JSON.stringify(document);
    assert.equal(text.split('## Signing requests').length, 2);
    assert.match(document.info.description, /\n## Signing requests\n/);
    for (const [name, operation] of operations) {
      if (!operation.security?.length) continue;
      assert.ok(
        operation.description?.includes(`[Signing requests](${SIGNING_RECIPE_LINK})`),
        `${name} does not link to the recipe`,
      );
    }
  });

  it('every VALIDATION_FAILED example is what the platform answers to its request', async () => {
    const merchant = await createMerchant(platform);
    const replayed: string[] = [];
    for (const [operationId, examples] of Object.entries(OPERATION_EXAMPLES)) {
      const [method, path] = examples.operation.split(' ') as [string, string];
      const shown = Object.values(examples.responses['400'] ?? {})[0]?.value as { msg?: string } | undefined;
      if (examples.invalid === undefined) {
        // Channel notifications are authenticated with the channel's secret, not a merchant's.
        assert.ok(
          (method === 'GET' && shown === undefined) || path.startsWith('/channels/'),
          `${operationId}: no invalid request`,
        );
        continue;
      }
      assert.equal(shown?.msg, 'VALIDATION_FAILED', operationId);
      const answer =
        'request' in examples.invalid
          ? await post(platform, merchant, path, examples.invalid.request)
          : await get(platform, merchant, path, examples.invalid.query || undefined);
      assert.equal(answer.status, 400, `${operationId}: ${JSON.stringify(answer.body)}`);
      assert.deepEqual(answer.body, shown, operationId);
      replayed.push(operationId);
    }
    assert.equal(replayed.length, 20);
  });

  it('the validator is real: a wrong example is caught', () => {
    const payment = document.components.schemas.Payment as Json;
    assert.deepEqual(validate({ $ref: '#/components/schemas/Payment' }, {}).length > 0, true);
    assert.ok(validate(payment, { orderNo: 'X' }).some((e) => /required/.test(e)));
    assert.ok(
      validate(
        { type: 'object', properties: { cashierUrl: { type: 'string', format: 'uri' } } },
        { cashierUrl: 'not a uri' },
      ).length > 0,
    );
  });
});
