import { createHmac, timingSafeEqual } from 'node:crypto';

/** What an access token grants. */
export interface Grant {
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Unix ms. */
  readonly expiresAt: number;
  /** The store's token epoch when issued; revoking all tokens moves the epoch on. */
  readonly epoch: number;
}

export type TokenCheck = { ok: true; grant: Grant } | { ok: false; reason: 'malformed' | 'expired' | 'revoked' };

/**
 * Self-contained bearer tokens: `base64url(grant JSON) "." base64url(HMAC-SHA256(key, that))`.
 * Nothing to store per token, so they survive a restart as a real provider's do; revocation is an
 * epoch in the durable state.
 */
export class TokenIssuer {
  readonly #key: Buffer;

  constructor(keyHex: string) {
    this.#key = Buffer.from(keyHex, 'hex');
  }

  issue(grant: Grant): string {
    const payload = Buffer.from(JSON.stringify(grant), 'utf8').toString('base64url');
    return `${payload}.${this.#mac(payload).toString('base64url')}`;
  }

  check(token: string, now: number, epoch: number): TokenCheck {
    const [payload, mac, ...rest] = token.split('.');
    if (payload === undefined || mac === undefined || rest.length > 0) return { ok: false, reason: 'malformed' };
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: 'malformed' };
    const grant = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Grant;
    if (grant.epoch !== epoch) return { ok: false, reason: 'revoked' };
    if (now >= grant.expiresAt) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
  }

  #mac(payload: string): Buffer {
    return createHmac('sha256', this.#key).update(payload).digest();
  }
}

/** Compares two secrets in constant time (over their digests, so not even the length leaks). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHmac('sha256', 'compare').update(given).digest();
  const b = createHmac('sha256', 'compare').update(expected).digest();
  return timingSafeEqual(a, b);
}
