import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The simulator's request authentication, used in both directions (platform → simulator calls,
 * simulator → platform notifications). Pure: the clock and the nonce memory are injected.
 *
 * Headers: `PSP-Timestamp: <unix seconds>`, `PSP-Nonce: <uuid v4>`,
 * `PSP-Signature: v1=<lowercase hex HMAC-SHA256(secret, base)>` where base is
 * `"<timestamp>\n<nonce>\n<METHOD>\n<path with raw query>\n"` followed by the raw body bytes.
 */

/** Header names as sent (receivers should look them up case-insensitively). */
export const TIMESTAMP_HEADER = 'PSP-Timestamp';
export const NONCE_HEADER = 'PSP-Nonce';
export const SIGNATURE_HEADER = 'PSP-Signature';

/** How far (seconds) a timestamp may be from the receiver's clock; also how long a nonce is remembered. */
export const MAX_SKEW_SECONDS = 300;

const TIMESTAMP = /^[0-9]{1,12}$/;
const NONCE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SIGNATURE = /^v1=([0-9a-f]{64})$/;

/** What is signed: the method, the path with its raw query, and the exact body bytes. */
export interface SignedRequest {
  readonly method: string;
  /** The request target as sent: path and raw query string (`/v1/charges?reference=P1`). */
  readonly path: string;
  readonly body: Uint8Array | string;
}

/** The bytes the HMAC covers. */
export function signatureBase(timestamp: string, nonce: string, request: SignedRequest): Buffer {
  const head = `${timestamp}\n${nonce}\n${request.method.toUpperCase()}\n${request.path}\n`;
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  return Buffer.concat([Buffer.from(head, 'utf8'), body]);
}

function hmacHex(secret: string, base: Buffer): string {
  return createHmac('sha256', secret).update(base).digest('hex');
}

/**
 * The three headers for `request`. `now` is unix milliseconds; `nonce` a fresh uuid v4
 * (`crypto.randomUUID()`), never reused.
 */
export function sign(
  secret: string,
  request: SignedRequest,
  options: { readonly now: number; readonly nonce: string },
): Record<string, string> {
  const timestamp = String(Math.floor(options.now / 1000));
  const signature = hmacHex(secret, signatureBase(timestamp, options.nonce, request));
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [NONCE_HEADER]: options.nonce,
    [SIGNATURE_HEADER]: `v1=${signature}`,
  };
}

/** Request headers as node (`IncomingMessage.headers`) or fetch (`Headers`) gives them. */
export type HeaderSource =
  { get(name: string): string | null } | Readonly<Record<string, string | string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | string[] | undefined>>;
  const lower = name.toLowerCase();
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== lower) continue;
    const value = record[key];
    return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  }
  return undefined;
}

export interface VerifyOptions {
  /** The receiver's clock, unix milliseconds. */
  readonly now: number;
  /**
   * Called only once the signature and timestamp are good: returns true when `nonce` was already
   * seen (a replay), otherwise remembers it until `expiresAt` (unix ms) and returns false.
   */
  readonly nonceSeen: (nonce: string, expiresAt: number) => boolean;
  /** Defaults to {@link MAX_SKEW_SECONDS}. */
  readonly maxSkewSeconds?: number;
}

export type VerifyFailure =
  'missing_headers' | 'malformed_headers' | 'stale_timestamp' | 'bad_signature' | 'replayed_nonce';

export type VerifyResult =
  | { readonly ok: true; readonly timestamp: number; readonly nonce: string }
  | { readonly ok: false; readonly reason: VerifyFailure };

/**
 * Checks a received request over the exact bytes received. The signature is compared in constant
 * time; the nonce is recorded only for a request that is otherwise valid, so a forged request
 * cannot burn a nonce.
 */
export function verify(
  secret: string,
  request: SignedRequest & { readonly headers: HeaderSource },
  options: VerifyOptions,
): VerifyResult {
  const timestamp = header(request.headers, TIMESTAMP_HEADER);
  const nonce = header(request.headers, NONCE_HEADER);
  const signature = header(request.headers, SIGNATURE_HEADER);
  if (timestamp === undefined || nonce === undefined || signature === undefined) {
    return { ok: false, reason: 'missing_headers' };
  }
  const given = SIGNATURE.exec(signature)?.[1];
  if (!TIMESTAMP.test(timestamp) || !NONCE.test(nonce) || given === undefined) {
    return { ok: false, reason: 'malformed_headers' };
  }
  const seconds = Number(timestamp);
  const maxSkew = options.maxSkewSeconds ?? MAX_SKEW_SECONDS;
  if (Math.abs(options.now / 1000 - seconds) > maxSkew) return { ok: false, reason: 'stale_timestamp' };
  const expected = Buffer.from(hmacHex(secret, signatureBase(timestamp, nonce, request)), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) return { ok: false, reason: 'bad_signature' };
  // Remembered until the timestamp leaves the window on the far side: after that the request is stale anyway.
  if (options.nonceSeen(nonce, (seconds + maxSkew) * 1000 + 1000)) return { ok: false, reason: 'replayed_nonce' };
  return { ok: true, timestamp: seconds, nonce };
}

/** An in-memory nonce memory for one process: `cache.seen` is a {@link VerifyOptions.nonceSeen}. */
export class NonceCache {
  readonly #expiries = new Map<string, number>();
  #lastPrune = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  readonly seen = (nonce: string, expiresAt: number): boolean => {
    const now = this.clock();
    if (now - this.#lastPrune > 10_000) {
      this.#lastPrune = now;
      for (const [key, expiry] of this.#expiries) if (expiry <= now) this.#expiries.delete(key);
    }
    const known = this.#expiries.get(nonce);
    if (known !== undefined && known > now) return true;
    this.#expiries.set(nonce, expiresAt);
    return false;
  };
}
