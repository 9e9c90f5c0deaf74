import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { openApiJson } from '../src/openapi/document.js';
import { PaygateClient } from '@paygate/merchant';

it('the committed openapi.json is the document the code describes (run `npm run openapi`)', () => {
  const committed = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
  assert.equal(committed, openApiJson());
});

it('every signed operation has code samples that call what exists: an SDK method, its path with paygate-merchant, a Python client method', () => {
  const document = JSON.parse(openApiJson()) as {
    paths: Record<
      string,
      Record<string, { security?: unknown[]; 'x-codeSamples'?: { label: string; source: string }[] }>
    >;
  };
  const client = new PaygateClient({
    baseUrl: 'http://127.0.0.1:8080',
    accessKey: 'ak_test_0123456789abcdef',
    privateKey: Buffer.alloc(32, 1).toString('base64'),
    bodyKey: { keyId: 'bk_test_1', publicKey: Buffer.alloc(32, 2).toString('base64') },
  }) as unknown as Record<string, unknown>;
  const python = readFileSync(new URL('../../../examples/python/paygate.py', import.meta.url), 'utf8');
  let signed = 0;
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation.security?.length) continue;
      signed++;
      const samples = operation['x-codeSamples'] ?? [];
      assert.deepEqual(
        samples.map((s) => s.label),
        ['SDK (TypeScript)', 'paygate-merchant', 'Python'],
        `${method} ${path}`,
      );
      const [sdk, cli, py] = samples.map((s) => s.source) as [string, string, string];
      const call = /await paygate\.([\w.]+)\(/.exec(sdk)?.[1] ?? '';
      const target = call.split('.').reduce<unknown>((at, name) => (at as Record<string, unknown>)?.[name], client);
      assert.equal(typeof target, 'function', `${method} ${path}: paygate.${call}`);
      const command = new RegExp(
        `npx paygate-merchant request ${method.toUpperCase()} '?${path.replaceAll('.', '\\.')}[?' ]`,
      );
      assert.match(`${cli} `, command, `${method} ${path}`);
      const pyMethod = /client\.(\w+)\(/.exec(py)?.[1] ?? '';
      assert.match(python, new RegExp(`def ${pyMethod}\\(`), `${method} ${path}: client.${pyMethod}`);
      if (pyMethod === 'call') assert.match(py, new RegExp(`client\\.call\\("${method.toUpperCase()}", "${path}"`));
    }
  }
  assert.equal(signed, 20);
});

it('Idempotency-Key says, where it is marked required, that it is signed and that creates deduplicate by merchantOrderNo alone', () => {
  const document = JSON.parse(openApiJson()) as {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; required?: boolean; description?: string }[] }>
    >;
  };
  let seen = 0;
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.name !== 'Idempotency-Key') continue;
        seen++;
        assert.equal(parameter.required, true);
        assert.match(parameter.description ?? '', /required by the protocol because the signature covers it/);
        assert.match(parameter.description ?? '', /deduplicated by merchantOrderNo alone/);
      }
    }
  }
  assert.ok(seen > 0);
  const api = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  assert.match(api, /`Idempotency-Key` \(a UUID v4\) is required by the protocol and covered by the signature/);
  assert.match(api, /deduplicated by `merchantOrderNo` alone/);
});
