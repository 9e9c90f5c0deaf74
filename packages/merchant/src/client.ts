import { randomUUID } from 'node:crypto';
import {
  type BodyPublicKey,
  MAX_PLAINTEXT_BYTES,
  type SigningKey,
  signReadRequest,
  signWriteRequest,
} from '@paygate/protocol';
import { z } from 'zod';
import { type BodyKeyConfig, checkAccessKey, loadBodyKey, loadSigningKey } from './config.js';
import { PaygateApiError, PaygateConfigError, PaygateNetworkError } from './errors.js';
import type {
  Balance,
  CreatePaymentInput,
  CreatePayoutInput,
  Currency,
  CurrencyRates,
  EventDelivery,
  LedgerEntriesQuery,
  LedgerEntry,
  ListEventsQuery,
  ListOrdersQuery,
  OrderRef,
  Page,
  Payment,
  PaymentMethodCode,
  PaymentStatus,
  Payout,
  PayoutReceipt,
  PayoutStatus,
  ReturnPayoutInput,
  CheckReceiverInput,
  ReceiverCheck,
  SimulatePaymentInput,
  SimulatePayoutInput,
  UpdateOrderInput,
} from './types.js';

/** How the client reaches the platform and who it signs as. */
export interface PaygateClientOptions {
  /** The platform's base URL, e.g. `http://127.0.0.1:8080` (sandbox) — without `/api/v1`. */
  readonly baseUrl: string;
  /** The access key onboarding printed (`ak_test_…` or `ak_live_…`). */
  readonly accessKey: string;
  /**
   * The merchant's Ed25519 private key: PEM PKCS#8 (what `paygate-merchant keygen` writes),
   * standard base64 of the 32-byte seed or the 64-byte key, or those bytes. It never leaves
   * this process.
   */
  readonly privateKey: string | Uint8Array;
  /** The platform body key onboarding printed (`bodyKey`): POST bodies are sealed to it. */
  readonly bodyKey: BodyKeyConfig;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof fetch;
  /** Time limit of one attempt, response body included, in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
  /**
   * Retries after a network error, a timeout or a 5xx answer (default 2, so three attempts).
   * 4xx answers are never retried. Every attempt is signed afresh with a new nonce.
   */
  readonly retries?: number;
  /** First retry delay in milliseconds; doubled on each retry, with jitter (default 250). */
  readonly retryDelayMs?: number;
  /** Longest retry delay in milliseconds, Retry-After included (default 5 000). */
  readonly maxRetryDelayMs?: number;
  /** The clock, milliseconds since the epoch (default `Date.now`); signatures use its seconds. */
  readonly clock?: () => number;
  /** Source of signature nonces, a fresh UUID v4 per HTTP attempt (default `crypto.randomUUID`). */
  readonly nonce?: () => string;
}

/** Per-call options. */
export interface RequestOptions {
  /** Cancels the call, retries included. */
  readonly signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  readonly timeoutMs?: number;
  /** Overrides the client's retry count. */
  readonly retries?: number;
  /**
   * Idempotency-Key header of a write (default: a fresh UUID v4 per call, the same on its
   * retries). For tracing only: the platform deduplicates creates by merchantOrderNo.
   */
  readonly idempotencyKey?: string;
}

/** Query parameters: values are stringified, `undefined` members are left out. */
export type QueryParams = Readonly<Record<string, string | number | undefined>>;

/** A request for {@link PaygateClient.send}. */
export type ApiRequest =
  | {
      readonly method: 'GET';
      /** Path under the base URL, e.g. `/api/v1/payments`. */
      readonly path: string;
      /** Parameters, or the raw query string (without `?`), which is sent and signed exactly as given. */
      readonly query?: QueryParams | string;
    }
  | {
      readonly method: 'POST';
      readonly path: string;
      /** The business JSON; it is serialized once, sealed and signed. */
      readonly body: unknown;
    };

/** What one exchange with the platform came to, whatever the outcome. */
export interface ApiResponse {
  /** HTTP status of the final attempt. */
  readonly status: number;
  /** Response headers of the final attempt. */
  readonly headers: Headers;
  /** The parsed JSON body, or the text when it was not JSON. */
  readonly body: unknown;
  /** The `Request-Id` response header. */
  readonly requestId: string | undefined;
  /** Attempts made (1 when no retry was needed). */
  readonly attempts: number;
  /** What the final attempt sent: URL, headers and the signature base that was signed. */
  readonly sent: {
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly signatureBase: string;
  };
}

const envelopeSchema = z.object({
  msg: z.string(),
  data: z.unknown().optional(),
  message: z.string().optional(),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});

const optionsSchema = z.object({
  baseUrl: z.url({ protocol: /^https?$/, error: 'an http(s) URL such as http://127.0.0.1:8080' }),
  timeoutMs: z.number().int().positive().optional(),
  retries: z.number().int().min(0).max(10).optional(),
  retryDelayMs: z.number().int().min(0).optional(),
  maxRetryDelayMs: z.number().int().min(0).optional(),
});

/** Payment orders: `/api/v1/payments…`. */
export interface PaymentsApi {
  /**
   * Creates a PENDING payment; its `cashierUrl` is where the payer pays. Repeating a create
   * with the same merchantOrderNo and fields returns the existing order, so it is safe to retry;
   * different fields are `DUPLICATE_ORDER`.
   */
  create(input: CreatePaymentInput, options?: RequestOptions): Promise<Payment>;
  /** Queries one payment by orderNo or merchantOrderNo: the source of truth when webhooks conflict. */
  query(ref: OrderRef, options?: RequestOptions): Promise<Payment>;
  /** Lists payments, newest first. */
  list(query?: ListOrdersQuery<PaymentStatus>, options?: RequestOptions): Promise<Page<Payment>>;
  /**
   * Every payment the filters select, newest first: fetches page after page (following
   * `nextCursor`) as the loop consumes them. `for await (const p of paygate.payments.iterate({ status: 'SUCCEEDED' }))`.
   */
  iterate(
    query?: IterateQuery<ListOrdersQuery<PaymentStatus>>,
    options?: RequestOptions,
  ): AsyncIterableIterator<Payment>;
  /** PENDING → CANCELED (a CANCELED webhook follows). Canceling a CANCELED order returns it unchanged. */
  cancel(ref: OrderRef, options?: RequestOptions): Promise<Payment>;
  /** Changes attach and/or webhookUrl while the payment is not final. */
  update(input: UpdateOrderInput, options?: RequestOptions): Promise<Payment>;
}

/** Payout orders: `/api/v1/payouts…`. */
export interface PayoutsApi {
  /** Creates a PENDING payout, reserving amount + fee; `INSUFFICIENT_BALANCE` when available is short. */
  create(input: CreatePayoutInput, options?: RequestOptions): Promise<Payout>;
  /** PENDING → PROCESSING (hands it to the channel). Confirming again returns it unchanged. */
  confirm(ref: OrderRef, options?: RequestOptions): Promise<Payout>;
  /** Changes attach and/or webhookUrl while the payout is PENDING. */
  update(input: UpdateOrderInput, options?: RequestOptions): Promise<Payout>;
  /** Queries one payout: the source of truth when webhooks conflict. */
  query(ref: OrderRef, options?: RequestOptions): Promise<Payout>;
  /** Lists payouts, newest first. */
  list(query?: ListOrdersQuery<PayoutStatus>, options?: RequestOptions): Promise<Page<Payout>>;
  /** Every payout the filters select, newest first, page after page (see {@link PaymentsApi.iterate}). */
  iterate(query?: IterateQuery<ListOrdersQuery<PayoutStatus>>, options?: RequestOptions): AsyncIterableIterator<Payout>;
  /** The payout receipt: payee details, amounts, fee and times. */
  receipt(ref: OrderRef, options?: RequestOptions): Promise<PayoutReceipt>;
}

/** Webhook events and their deliveries: `/api/v1/events…`. */
export interface EventsApi {
  /** Lists events, newest first; filtered by `orderNo` each carries its attempt log. */
  list(query?: ListEventsQuery, options?: RequestOptions): Promise<Page<EventDelivery>>;
  /** Every event the filters select, newest first, page after page (see {@link PaymentsApi.iterate}). */
  iterate(query?: IterateQuery<ListEventsQuery>, options?: RequestOptions): AsyncIterableIterator<EventDelivery>;
  /** Delivers an event once more: same eventId and body, fresh signature. */
  resend(eventId: string, options?: RequestOptions): Promise<EventDelivery>;
}

/** Sandbox helpers that act as the channel (404 in production). */
export interface SandboxApi {
  /** Drives a payment: PROCESSING, SUCCEEDED (with payer details), FAILED or EXPIRED. */
  simulatePayment(input: SimulatePaymentInput, options?: RequestOptions): Promise<Payment>;
  /** Drives a payout: PROCESSING, SUCCEEDED or FAILED. */
  simulatePayout(input: SimulatePayoutInput, options?: RequestOptions): Promise<Payout>;
  /** Returns a SUCCEEDED payout upstream: credits the principal once and moves it to REFUNDED. */
  returnPayout(input: ReturnPayoutInput, options?: RequestOptions): Promise<Payout>;
  /**
   * Has the platform fire correctly signed and tampered webhooks at your receiver, the valid one
   * signed with the platform's own webhook key (so a receiver configured from onboarding passes
   * unchanged), and answers each case's expected and observed result. It takes one request per
   * case (up to 5 s each): give it a `timeoutMs` to match, and `retries: 0`.
   */
  checkReceiver(input: CheckReceiverInput, options?: RequestOptions): Promise<ReceiverCheck>;
}

/** The merchant's ledger: `/api/v1/ledger/entries`. */
export interface LedgerApi {
  /** Postings on the merchant's accounts, newest first. */
  entries(query?: LedgerEntriesQuery, options?: RequestOptions): Promise<Page<LedgerEntry>>;
  /** Every entry the filters select, newest first, page after page (see {@link PaymentsApi.iterate}). */
  iterateEntries(
    query?: IterateQuery<LedgerEntriesQuery>,
    options?: RequestOptions,
  ): AsyncIterableIterator<LedgerEntry>;
}

/**
 * The filters of an auto-paginating iterator: those of the list endpoint, without `cursor`
 * (the iterator follows the cursors itself); `pageSize` is the size of each page fetched.
 */
export type IterateQuery<Q extends { cursor?: string }> = Omit<Q, 'cursor'>;

/**
 * Yields every item of a cursor-paginated list: fetches the first page, then the page each
 * `nextCursor` names, until it is `null`. Pages are fetched lazily, one at a time, as the
 * consumer asks; stopping the loop early fetches no more.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (page.nextCursor === null || page.nextCursor === undefined || page.nextCursor === cursor) return;
    cursor = page.nextCursor;
  }
}

const refQuery = (ref: OrderRef): QueryParams =>
  ref.orderNo !== undefined ? { orderNo: ref.orderNo } : { merchantOrderNo: ref.merchantOrderNo };

/** Serializes query parameters in the order given; the result is sent and signed as is. */
export function encodeQuery(query: QueryParams | string | undefined): string | undefined {
  if (query === undefined || typeof query === 'string') return query === '' ? undefined : query;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined) params.append(name, String(value));
  }
  const text = params.toString();
  return text === '' ? undefined : text;
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function serializeBody(body: unknown, path: string): Buffer {
  const json = JSON.stringify(body);
  if (json === undefined) throw new PaygateConfigError(`POST ${path}: the body must be JSON (an object)`);
  const bytes = Buffer.from(json, 'utf8');
  if (bytes.length > MAX_PLAINTEXT_BYTES) {
    throw new PaygateConfigError(
      `POST ${path}: the body is ${bytes.length} bytes of JSON; at most 1 MiB may be sealed`,
    );
  }
  return bytes;
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The Paygate merchant API client: every call is a signed GET or a signed, sealed POST built
 * with `@paygate/protocol`. Construct it once and share it.
 *
 * @example
 * ```ts
 * const paygate = new PaygateClient({ baseUrl, accessKey, privateKey: pem, bodyKey });
 * const payment = await paygate.payments.create({
 *   merchantOrderNo: 'order-1001', currency: 'BRL', amount: '125.50',
 *   paymentMethod: { code: 'PIX' }, webhookUrl: 'https://shop.example/webhook/payment',
 * });
 * // send the payer to payment.cashierUrl
 * ```
 */
export class PaygateClient {
  /** Payment orders. */
  readonly payments: PaymentsApi;
  /** Payout orders. */
  readonly payouts: PayoutsApi;
  /** Webhook events and deliveries. */
  readonly events: EventsApi;
  /** Sandbox channel helpers. */
  readonly sandbox: SandboxApi;
  /** The merchant's ledger entries. */
  readonly ledger: LedgerApi;
  /** The access key requests are signed for. */
  readonly accessKey: string;

  readonly #base: URL;
  readonly #key: SigningKey;
  readonly #bodyKey: BodyPublicKey;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly #clock: () => number;
  readonly #nonce: () => string;

  /** @throws {@link PaygateConfigError} when a key, the access key or an option is unusable. */
  constructor(options: PaygateClientOptions) {
    const checked = optionsSchema.safeParse(options);
    if (!checked.success) {
      const problems = checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
      throw new PaygateConfigError(`invalid PaygateClient options: ${problems.join('; ')}`);
    }
    this.accessKey = checkAccessKey(options.accessKey);
    this.#key = loadSigningKey(options.privateKey);
    this.#bodyKey = loadBodyKey(options.bodyKey);
    this.#base = new URL(options.baseUrl);
    if (this.#base.search || this.#base.hash) {
      throw new PaygateConfigError('baseUrl: no query string or fragment (only scheme, host and an optional path)');
    }
    if (/\/api\/v1\/?$/.test(this.#base.pathname)) {
      const without = new URL(this.#base);
      without.pathname = without.pathname.replace(/\/api\/v1\/?$/, '/');
      throw new PaygateConfigError(
        `baseUrl: ${options.baseUrl} ends in /api/v1, and every request path already starts with it ` +
          `(/api/v1/payments would become /api/v1/api/v1/payments, a 404); give the platform's address without it: ` +
          `${without.href.replace(/\/$/, '')}`,
      );
    }
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#retries = options.retries ?? 2;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    this.#clock = options.clock ?? Date.now;
    this.#nonce = options.nonce ?? randomUUID;

    const get = <T>(path: string, query?: QueryParams, o?: RequestOptions) =>
      this.call<T>({ method: 'GET', path, query: query ?? {} }, o);
    const post = <T>(path: string, body: unknown, o?: RequestOptions) =>
      this.call<T>({ method: 'POST', path, body }, o);

    this.payments = {
      create: (input, o) => post('/api/v1/payments', input, o),
      query: (ref, o) => get('/api/v1/payments', refQuery(ref), o),
      list: (query, o) => get('/api/v1/payments/list', { ...query }, o),
      iterate: (query, o) => paginate((cursor) => this.payments.list({ ...query, cursor }, o)),
      cancel: (ref, o) => post('/api/v1/payments/cancel', ref, o),
      update: (input, o) => post('/api/v1/payments/update', input, o),
    };
    this.payouts = {
      create: (input, o) => post('/api/v1/payouts', input, o),
      confirm: (ref, o) => post('/api/v1/payouts/confirm', ref, o),
      update: (input, o) => post('/api/v1/payouts/update', input, o),
      query: (ref, o) => get('/api/v1/payouts', refQuery(ref), o),
      list: (query, o) => get('/api/v1/payouts/list', { ...query }, o),
      iterate: (query, o) => paginate((cursor) => this.payouts.list({ ...query, cursor }, o)),
      receipt: (ref, o) => get('/api/v1/payouts/receipt', refQuery(ref), o),
    };
    this.events = {
      list: (query, o) => get('/api/v1/events', { ...query }, o),
      iterate: (query, o) => paginate((cursor) => this.events.list({ ...query, cursor }, o)),
      resend: (eventId, o) => post('/api/v1/events/resend', { eventId }, o),
    };
    this.sandbox = {
      simulatePayment: (input, o) => post('/api/v1/sandbox/payments/simulate', input, o),
      simulatePayout: (input, o) => post('/api/v1/sandbox/payouts/simulate', input, o),
      returnPayout: (input, o) => post('/api/v1/sandbox/payouts/return', input, o),
      checkReceiver: (input, o) => post('/api/v1/sandbox/webhooks/check', input, o),
    };
    this.ledger = {
      entries: (query, o) => get('/api/v1/ledger/entries', { ...query }, o),
      iterateEntries: (query, o) => paginate((cursor) => this.ledger.entries({ ...query, cursor }, o)),
    };
  }

  /** Balances per currency (every platform currency unless `currency` narrows it). */
  balances(query: { currency?: Currency } = {}, options?: RequestOptions): Promise<Balance[]> {
    return this.call({ method: 'GET', path: '/api/v1/balances', query: { ...query } }, options);
  }

  /** The rate table: pay-in fee per currency and method, payout fee per currency. */
  rates(
    query: { currency?: Currency; method?: PaymentMethodCode } = {},
    options?: RequestOptions,
  ): Promise<CurrencyRates[]> {
    return this.call({ method: 'GET', path: '/api/v1/rates', query: { ...query } }, options);
  }

  /**
   * Sends one request and returns `data` of a `{"msg":"SUCCESS"}` answer.
   *
   * @throws {@link PaygateApiError} for any other answer; {@link PaygateNetworkError} when no
   * attempt got an answer.
   */
  async call<T>(request: ApiRequest, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(request, options);
    const parsed = envelopeSchema.safeParse(response.body);
    const ok = response.status >= 200 && response.status < 300;
    if (ok && parsed.success && parsed.data.msg === 'SUCCESS') return parsed.data.data as T;
    throw new PaygateApiError({
      msg: parsed.success ? parsed.data.msg : 'INVALID_RESPONSE',
      status: response.status,
      fieldErrors: parsed.success ? (parsed.data.errors ?? []) : [],
      requestId: response.requestId,
      detail: parsed.success
        ? parsed.data.message
        : `the answer is not the API's {"msg": …} JSON: ${String(typeof response.body === 'string' ? response.body : JSON.stringify(response.body)).slice(0, 200)}`,
      body: response.body,
      method: request.method,
      path: request.path,
    });
  }

  /**
   * Sends one signed request (sealed, for a POST) and returns the answer whatever its status:
   * the low-level call under every typed method, and what `paygate-merchant request` prints.
   * Network errors, timeouts and 5xx answers are retried with backoff, each attempt signed
   * afresh (new created, nonce and, for a POST, a new sealed envelope).
   *
   * @throws {@link PaygateNetworkError} when no attempt got an answer.
   */
  async send(request: ApiRequest, options: RequestOptions = {}): Promise<ApiResponse> {
    if (!request.path.startsWith('/')) throw new PaygateConfigError(`path must start with /: ${request.path}`);
    const retries = options.retries ?? this.#retries;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const raw = request.method === 'GET' ? encodeQuery(request.query) : undefined;
    // Sign the target exactly as fetch will send it: the URL parser percent-encodes what may not
    // appear raw (a space, a quote, non-ASCII) and resolves dot segments.
    const target = new URL(
      `${this.#base.origin}${this.#base.pathname.replace(/\/$/, '')}${request.path}${raw === undefined ? '' : `?${raw}`}`,
    );
    const path = target.pathname;
    const query = target.search === '' ? undefined : target.search.slice(1);
    const url = `${target.origin}${path}${query === undefined ? '' : `?${query}`}`;
    if (request.method === 'POST' && query !== undefined) {
      throw new PaygateConfigError(`a POST has no query string: ${request.path}`);
    }
    // Serialized once: every attempt seals these same bytes.
    const plaintext = request.method === 'POST' ? serializeBody(request.body, request.path) : undefined;
    const idempotencyKey = options.idempotencyKey ?? randomUUID();

    for (let attempt = 1; ; attempt++) {
      const signer = {
        accessKey: this.accessKey,
        key: this.#key,
        created: Math.floor(this.#clock() / 1000),
        nonce: this.#nonce(),
      };
      const signed = plaintext
        ? signWriteRequest({ path, plaintext, bodyKey: this.#bodyKey, idempotencyKey }, signer)
        : signReadRequest({ path, query }, signer);
      const signal = options.signal
        ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs);
      const sent = { url, headers: signed.headers, signatureBase: signed.signatureBase };

      let failure: unknown;
      try {
        const response = await this.#fetch(url, {
          method: request.method,
          headers: signed.headers,
          ...(signed.body ? { body: new Uint8Array(signed.body) } : {}),
          signal,
          redirect: 'manual',
        });
        const text = await response.text();
        const retryable = response.status >= 500 && attempt <= retries;
        if (!retryable) {
          return {
            status: response.status,
            headers: response.headers,
            body: parseBody(text),
            requestId: response.headers.get('request-id') ?? undefined,
            attempts: attempt,
            sent,
          };
        }
        await sleep(this.#delay(attempt, response.headers.get('retry-after')), options.signal);
        continue;
      } catch (error) {
        // The caller's own cancellation ends the call as it is.
        if (options.signal?.aborted) throw options.signal.reason;
        failure = error;
      }
      const timedOut = failure instanceof Error && failure.name === 'TimeoutError';
      if (attempt > retries) {
        throw new PaygateNetworkError({ method: request.method, path, attempts: attempt, timedOut, cause: failure });
      }
      await sleep(this.#delay(attempt, null), options.signal);
    }
  }

  /** Exponential backoff with jitter; a Retry-After in seconds is honoured up to the cap. */
  #delay(attempt: number, retryAfter: string | null): number {
    const exponential = Math.min(this.#maxRetryDelayMs, this.#retryDelayMs * 2 ** (attempt - 1));
    const jittered = exponential * (0.5 + Math.random() / 2);
    const asked = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : 0;
    return Math.min(this.#maxRetryDelayMs, Math.max(jittered, asked));
  }
}
