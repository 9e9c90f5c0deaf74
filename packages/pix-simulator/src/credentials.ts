import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '@paygate/simulator-kit';

const Credentials = z.strictObject({
  clientId: z.string().min(1),
  clientSecret: z.string().min(16),
  /** The receiving account's Pix key (a random EVP key, as a bank would give one). */
  pixKey: z.string().min(1).max(77),
  /** HMAC key of the access tokens (hex). */
  tokenKey: z.string().regex(/^[0-9a-f]{64}$/),
});
export type Credentials = z.output<typeof Credentials>;

/**
 * The platform's OAuth client and the account's Pix key, made on first start and kept in
 * `<dataDir>/credentials.json` (mode 0600) so the channels snippet stays valid across restarts.
 */
export function ensureCredentials(dataDir: string): Credentials {
  const path = join(dataDir, 'credentials.json');
  if (existsSync(path)) return Credentials.parse(JSON.parse(readFileSync(path, 'utf8')));
  const credentials: Credentials = {
    clientId: `paygate-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
    pixKey: randomUUID(),
    tokenKey: randomBytes(32).toString('hex'),
  };
  writeFileAtomic(path, `${JSON.stringify(credentials, null, 2)}\n`);
  return credentials;
}
