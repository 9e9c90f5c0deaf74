import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@paygate/simulator-kit';
import ssh2, { type ParsedKey } from 'ssh2';
import { ConfigError } from './config.js';

const { utils } = ssh2;

/** A key's fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and the unpadded base64 of the SHA-256 of its blob. */
export function fingerprintOf(publicBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The bank's SSH host key: made once (ed25519) into the data directory, then kept, so the fingerprint stays. */
export interface HostKey {
  /** The private key, OpenSSH format. */
  readonly privateKey: string;
  /** The public key, one OpenSSH line (`ssh-ed25519 AAAA… paygate-bank`). */
  readonly publicKey: string;
  readonly fingerprint: string;
}

export const HOST_KEY_FILE = 'ssh_host_ed25519_key';

/**
 * A new ed25519 key pair in OpenSSH format. ssh2's generator makes about one pair in 256 that its
 * own parser then refuses (mscdex/ssh2#1513), so a pair is kept only once both halves parse.
 */
export function generateSshKeyPair(comment: string): { readonly private: string; readonly public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519', { comment });
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error))
      return pair;
  }
}

export function ensureHostKey(dataDir: string): HostKey {
  const path = join(dataDir, HOST_KEY_FILE);
  if (!existsSync(path)) {
    const pair = generateSshKeyPair('paygate-bank');
    writeFileAtomic(`${path}.pub`, `${pair.public}\n`, { mode: 0o644 });
    writeFileAtomic(path, pair.private, { mode: 0o600 });
  }
  const privateKey = readFileSync(path, 'utf8');
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new Error(`${path}: ${parsed.message}`);
  const blob = parsed.getPublicSSH();
  return {
    privateKey,
    publicKey: `${parsed.type} ${blob.toString('base64')} paygate-bank`,
    fingerprint: fingerprintOf(blob),
  };
}

/** The one key allowed to log in: the platform's public key, read from its OpenSSH `.pub` file. */
export interface AuthorizedKey {
  readonly key: ParsedKey;
  readonly type: string;
  readonly blob: Buffer;
  readonly fingerprint: string;
}

/** Reads and checks the authorized key file; a file that is missing or not one public key is refused with one line. */
export function loadAuthorizedKey(file: string): AuthorizedKey {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `BANK_AUTHORIZED_KEY ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const parsed = utils.parseKey(text.trim());
  if (parsed instanceof Error || Array.isArray(parsed)) {
    throw new ConfigError(`BANK_AUTHORIZED_KEY ${file} is not an OpenSSH public key (ssh-ed25519 AAAA…)`);
  }
  if (parsed.isPrivateKey()) {
    throw new ConfigError(`BANK_AUTHORIZED_KEY ${file} is a private key; give the public one (the .pub file)`);
  }
  const blob = parsed.getPublicSSH();
  return { key: parsed, type: parsed.type, blob, fingerprint: fingerprintOf(blob) };
}
