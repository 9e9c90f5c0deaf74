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
    /** How the owner of the nonce table (modules/auth) records it. */
    readonly recording: NonceRecording,
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
    this.settling ??= this.recording.alone(this).then(
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
 * How a nonce is recorded, given by the module that owns the nonce table (modules/auth): the
 * database layer runs these statements without naming the table itself.
 */
export interface NonceRecording {
  /** Alone (the per-turn batch of nonces): `true` when it was new. */
  alone(use: RequestNonce): Promise<boolean>;
  /** As a statement of a transaction, with parameters: one row returned when it was new. */
  readonly statement: { readonly name: string; readonly text: string };
  params(use: RequestNonce): unknown[];
  /**
   * The same as literal SQL, for the simple-query message that opens a transaction on PostgreSQL
   * (`BEGIN; INSERT …; SAVEPOINT …` in one round trip; a simple query takes no parameters); its
   * row count is 1 when the nonce was new.
   */
  literal(use: RequestNonce): string;
}

/** The savepoint after the nonce: a business refusal rolls back to it and still commits the nonce. */
export const BUSINESS_SAVEPOINT = 'business';
