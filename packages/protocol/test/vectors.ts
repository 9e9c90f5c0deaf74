import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedFile } from './shared-files.js';

/** The shared, independently produced protocol vectors (`../shared/vectors`). */
export interface Vectors {
  now: number;
  keys: {
    merchant: {
      seed_base64: string;
      full_key_base64: string;
      public_key_base64: string;
      private_key_pem: string;
      public_key_pem: string;
    };
    platform_webhook: {
      keyid: string;
      seed_base64: string;
      full_key_base64: string;
      public_key_base64: string;
      private_key_pem: string;
      public_key_pem: string;
    };
    platform_body: { keyId: string; secret_key_base64: string; public_key_base64: string };
  };
  access_key: string;
  write_request: {
    method: string;
    path: string;
    query: string;
    headers: Record<string, string>;
    body_utf8: string;
    plaintext_utf8: string;
    signature_input: string;
    signature_base: string;
    signature: string;
  };
  read_requests: {
    method: string;
    path: string;
    query: string;
    url_path_and_query: string;
    headers: Record<string, string>;
    signature_input: string;
    signature_base: string;
    signature: string;
  }[];
  webhooks: {
    webhook_url: string;
    method: string;
    headers: Record<string, string>;
    body_utf8: string;
    signature_input: string;
    signature_base: string;
    signature: string;
  }[];
  sealed_box_open: { secret_key_base64: string; ciphertext_base64: string; plaintext_utf8: string }[];
}

/** The shared vectors (see sharedFile), or the copy committed with these tests. */
const vectorsPath =
  sharedFile('vectors/protocol-vectors.json') ?? join(import.meta.dirname, 'fixtures/protocol-vectors.json');

export const vectors: Vectors = JSON.parse(readFileSync(vectorsPath, 'utf8')) as Vectors;
