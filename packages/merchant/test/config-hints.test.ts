/**
 * The SDK explains two first-day mistakes at construction instead of failing later: a baseUrl
 * that already ends in /api/v1 (every request path starts with it, so the request would be a 404
 * on /api/v1/api/v1/…), and a public key given where the private key goes.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { generateSigningKey, signingKeyToPem } from '@paygate/protocol';
import { PaygateClient, PaygateConfigError } from '@paygate/merchant';

const key = signingKeyToPem(generateSigningKey());
const options = {
  baseUrl: 'http://127.0.0.1:8080',
  accessKey: 'ak_test_abcdefghijklmnopqrstuv',
  privateKey: key.privateKeyPem,
  bodyKey: { keyId: 'bk_test_1', publicKey: randomBytes(32).toString('base64') },
};

function refusal(change: Partial<typeof options>): string {
  try {
    new PaygateClient({ ...options, ...change });
  } catch (error) {
    assert.ok(error instanceof PaygateConfigError, String(error));
    return error.message;
  }
  assert.fail('the client was created');
}

describe('PaygateClient explains first-day mistakes', () => {
  it('takes the platform address, with or without a path prefix of its own', () => {
    assert.ok(new PaygateClient(options));
    assert.ok(new PaygateClient({ ...options, baseUrl: 'https://gateway.example/paygate' }));
  });

  it('a baseUrl ending in /api/v1 (with or without a slash) names the address to give instead', () => {
    assert.equal(
      refusal({ baseUrl: 'http://127.0.0.1:8080/api/v1' }),
      "baseUrl: http://127.0.0.1:8080/api/v1 ends in /api/v1, and every request path already starts with it (/api/v1/payments would become /api/v1/api/v1/payments, a 404); give the platform's address without it: http://127.0.0.1:8080",
    );
    assert.match(
      refusal({ baseUrl: 'https://gateway.example/paygate/api/v1/' }),
      /without it: https:\/\/gateway\.example\/paygate$/,
    );
  });

  it('a public key given as the private key says so and where the private key is', () => {
    assert.equal(
      refusal({ privateKey: key.publicKeyPem }),
      'privateKey: this is a public key (a PEM "PUBLIC KEY" block); give the private key instead, the private.pem that `paygate-merchant keygen` wrote beside public.pem (the public key is what the platform holds)',
    );
  });
});
