/**
 * A signed request's nonce whose signature verified and which is not yet recorded: the write's own
 * transaction records it as its first statement (one commit per write instead of two), or, for a
 * read, it is recorded in the same flight as the read (see http/merchant-api.ts). Whoever records
 * it tells this object, so that it is recorded once and the request answered 401 when it was
 * used before, before any business statement of that request ran.
 *
 * Every route that takes one must record it before anything outside the database happens (a call
 * to a channel): `settle()` then, which records it alone. The merchant API checks after the route
 * that it was recorded.
 */
export class RequestNonce {
  private state: 'pending' | 'recorded' | 'refused' = 'pending';
  private settling: Promise<void> | undefined;

  constructor(
    readonly merchantId: bigint,
    /** Lowercased: the one spelling the primary key compares. */
    readonly nonce: string,
    readonly expiresAt: Date,
    /** Records it alone (the per-turn batch of nonces): `true` when it was new. */
    private readonly recordAlone: (use: RequestNonce) => Promise<boolean>,
  ) {}

  /** Neither recorded nor refused yet: the next statement of the request's write must record it. */
  get pending(): boolean {
    return this.state === 'pending';
  }

  get refused(): boolean {
    return this.state === 'refused';
  }

  /** What recorded it said: new (`true`) or used before (`false`). */
  decided(fresh: boolean): void {
    this.state = fresh ? 'recorded' : 'refused';
  }

  /**
   * Records the nonce now if nothing has, alone; throws NonceRefused when it was used before. Called
   * twice, it records once.
   */
  settle(): Promise<void> {
    if (this.state === 'recorded') return Promise.resolve();
    if (this.state === 'refused') return Promise.reject(new NonceRefused());
    this.settling ??= this.recordAlone(this).then(
      (fresh) => {
        this.decided(fresh);
        if (!fresh) throw new NonceRefused();
      },
      (error: unknown) => {
        // Nothing recorded: a later settle tries again.
        this.settling = undefined;
        throw error;
      },
    );
    return this.settling;
  }
}

/** The request's nonce was used before: answered 401 UNAUTHORIZED, its business never ran. */
export class NonceRefused extends Error {
  constructor() {
    super('the nonce was used before');
    this.name = 'NonceRefused';
  }
}

/**
 * One nonce, recorded as the first statement of a write's transaction; RETURNING answers whether it
 * was new. The primary key (merchant_id, nonce) decides across instances, as for the batches.
 */
export const RECORD_NONCE = {
  name: 'nonce_record_one',
  text: `INSERT INTO request_nonces (merchant_id, nonce, expires_at) VALUES ($1, $2, $3)
   ON CONFLICT DO NOTHING RETURNING nonce`,
} as const;

/** The parameters of RECORD_NONCE for `nonce`. */
export const recordNonceParams = (use: RequestNonce): unknown[] => [use.merchantId, use.nonce, use.expiresAt];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * RECORD_NONCE as literal SQL, for the simple-query message that opens a transaction on
 * PostgreSQL (`BEGIN; INSERT …; SAVEPOINT …` in one round trip; a simple query takes no
 * parameters). Only checked values are written into it: the merchant's id (a bigint), the nonce (a
 * lowercase UUID, as the signature's parameters allow) and the expiry (whole seconds).
 */
export function recordNonceSql(use: RequestNonce): string {
  if (!UUID.test(use.nonce)) throw new Error('a nonce to record is a lowercase UUID');
  const seconds = use.expiresAt.getTime() / 1000;
  if (!Number.isInteger(seconds)) throw new Error('a nonce expires at a whole second');
  return `INSERT INTO request_nonces (merchant_id, nonce, expires_at)
    VALUES (${BigInt(use.merchantId).toString()}, '${use.nonce}', to_timestamp(${seconds}))
    ON CONFLICT DO NOTHING`;
}

/** The savepoint after the nonce: a business refusal rolls back to it and still commits the nonce. */
export const BUSINESS_SAVEPOINT = 'business';
