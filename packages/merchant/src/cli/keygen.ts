import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { generateSigningKey, signingKeyToPem } from '@paygate/protocol';
import { CliError } from './config.js';

/**
 * `keygen`: a fresh Ed25519 key pair in `dir` (private.pem mode 0600, public.pem). Prints the
 * public key to upload, base64 of the raw 32 bytes, alone on stdout; guidance goes to stderr.
 */
export function keygen(dir: string, force: boolean): void {
  const privatePath = join(dir, 'private.pem');
  const publicPath = join(dir, 'public.pem');
  if (!force && (existsSync(privatePath) || existsSync(publicPath))) {
    throw new CliError(`${privatePath} or ${publicPath} exists already; pass --force to replace the key pair`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = generateSigningKey();
  const { privateKeyPem, publicKeyPem } = signingKeyToPem(key);
  writeFileSync(privatePath, privateKeyPem, { mode: 0o600 });
  // writeFileSync's mode applies only when it creates the file; --force may replace one.
  chmodSync(privatePath, 0o600);
  writeFileSync(publicPath, publicKeyPem, { mode: 0o644 });
  const relativeDir = relative(process.cwd(), dir);
  const shown = relativeDir.startsWith('..') ? dir : relativeDir || '.';
  process.stderr.write(
    `Wrote ${join(shown, 'private.pem')} (your private key: keep it secret, never upload it; mode 0600)\n` +
      `  and ${join(shown, 'public.pem')}.\n` +
      'The public key to upload (base64 of the raw 32 bytes) follows on stdout. Onboard with:\n' +
      `  npx paygate merchant create --name "My shop" --public-key @${join(shown, 'public.pem')} --json > merchant.json\n`,
  );
  process.stdout.write(`${key.publicKey.toString('base64')}\n`);
}
