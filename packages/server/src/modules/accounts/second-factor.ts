/** The second factor of portal and back-office accounts: TOTP (RFC 6238) codes and single-use recovery codes. */
import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { toDataURL } from 'qrcode';

/** A code's time step, in milliseconds (RFC 6238's default, what authenticator apps use). */
export const TOTP_PERIOD_MS = 30_000;
/** How many recovery codes a second factor comes with. */
export const RECOVERY_CODES = 10;
/** A check of the second factor older than this is asked again before a sensitive change (step-up). */
export const STEP_UP_MS = 5 * 60_000;

/** A new random TOTP secret (160 bits, as RFC 4226 recommends). */
export const newTotpSecret = (): Buffer => randomBytes(20);

/** What an authenticator app is shown: the otpauth:// URI, as a QR code and as text. */
export async function enrollment(secret: Buffer, email: string, issuer: string) {
  const totp = new TOTP({
    issuer,
    label: email,
    secret: new Secret({ buffer: new Uint8Array(secret).buffer }),
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD_MS / 1000,
  });
  const uri = totp.toString();
  return { secret: totp.secret.base32, uri, qrCode: await toDataURL(uri, { margin: 2, width: 220 }) };
}

/**
 * The time step a 6-digit `code` belongs to for `secret` at `nowMs` (the current step or one to
 * either side, for clock drift), or `undefined` when it is not a valid code.
 */
export function totpStep(secret: Buffer, code: string, nowMs: number): number | undefined {
  const token = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = TOTP.validate({
    token,
    secret: new Secret({ buffer: new Uint8Array(secret).buffer }),
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD_MS / 1000,
    timestamp: nowMs,
    window: 1,
  });
  return delta === null ? undefined : Math.floor(nowMs / TOTP_PERIOD_MS) + delta;
}

/** The current code of `secret` (tests, and nothing else, generate codes). */
export function totpCode(secret: string | Buffer, nowMs: number): string {
  return TOTP.generate({
    secret:
      typeof secret === 'string' ? Secret.fromBase32(secret) : new Secret({ buffer: new Uint8Array(secret).buffer }),
    algorithm: 'SHA1',
    digits: 6,
    period: TOTP_PERIOD_MS / 1000,
    timestamp: nowMs,
  });
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten fresh recovery codes, `xxxxx-xxxxx` (about 49 bits each). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const bytes = randomBytes(10);
    const chars = Array.from(bytes, (b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** How a recovery code is stored: the SHA-256 of its normalized text. */
export function recoveryCodeHash(code: string): Buffer {
  const normalized = code
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return createHash('sha256').update(`paygate-recovery:${normalized}`).digest();
}
