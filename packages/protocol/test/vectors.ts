import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** The shared vectors beside the checkout, or the copy committed with these tests. */
function vectorsPath(): string {
  const candidates = [
    process.env.PAYGATE_SHARED_DIR && join(process.env.PAYGATE_SHARED_DIR, 'vectors/protocol-vectors.json'),
    join(import.meta.dirname, '../../../../shared/vectors/protocol-vectors.json'),
    join(import.meta.dirname, 'fixtures/protocol-vectors.json'),
  ];
  const found = candidates.find((path) => path && existsSync(path));
  if (!found) throw new Error('protocol-vectors.json not found');
  return found;
}

export const vectors: Vectors = JSON.parse(readFileSync(vectorsPath(), 'utf8')) as Vectors;
