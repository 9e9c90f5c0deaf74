import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolStats } from '../db/db.js';

/**
 * Counters of durable business facts, counted where the fact commits (`afterCommit`) rather than
 * where a request happens to be: one set per process, registered in every Metrics registry.
 */
const ordersFinal = new Counter({
  name: 'paygate_orders_final_total',
  help: 'Orders that reached a final state (a REFUNDED payout counts again), by order type and status',
  labelNames: ['type', 'status'] as const,
  registers: [],
});
const ledgerPostings = new Counter({
  name: 'paygate_ledger_postings_total',
  help: 'Ledger transactions posted, by kind',
  labelNames: ['kind'] as const,
  registers: [],
});

/** Counts an order reaching a final state; call once its transaction has committed. */
export function countFinalOrder(type: string, status: string): void {
  ordersFinal.inc({ type, status });
}

/** Counts a ledger posting; call once its transaction has committed. */
export function countLedgerPosting(kind: string): void {
  ledgerPostings.inc({ kind });
}

/** What the scrape-time gauges read, besides the webhook queue. */
export interface MetricSources {
  /** Rows in the nonce store (a cheap count). */
  readonly nonces?: () => Promise<number>;
  /** The database pool's occupancy; `undefined` for the embedded database. */
  readonly pool?: () => PoolStats | undefined;
  /** The embedded database's WebAssembly memory in bytes; `undefined` on PostgreSQL. */
  readonly embeddedMemory?: () => number | undefined;
  /** Per sepa-sftp channel, the age of its oldest file uploaded without a word from the bank. */
  readonly sepaUnacknowledged?: () => Promise<readonly { channel: string; ageSeconds: number }[]>;
}

/** Outcome of a call to a payment channel. */
export type ChannelOutcome = 'ok' | 'error' | 'timeout';

/** The platform's Prometheus metrics, one registry per process (served at /metrics). */
export class Metrics {
  readonly registry = new Registry();
  private readonly deliveries = new Counter({
    name: 'paygate_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'paygate_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly httpRequests = new Counter({
    name: 'paygate_http_requests_total',
    help: 'HTTP requests answered, by method, route template (unmatched for none) and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'paygate_http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to answering it, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly authFailures = new Counter({
    name: 'paygate_auth_failures_total',
    help: 'Merchant API requests refused as UNAUTHORIZED, by the verification step that refused them',
    labelNames: ['step'] as const,
    registers: [this.registry],
  });
  private readonly channelCalls = new Counter({
    name: 'paygate_channel_calls_total',
    help: 'Calls to payment channels, by channel, operation and outcome (ok, error, timeout)',
    labelNames: ['channel', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly sepaFiles = {
    invalid: new Counter({
      name: 'paygate_sepa_files_invalid_total',
      help: 'SEPA batches whose pain.001 failed its checks (XSD): nothing uploaded, the payouts stay PROCESSING',
      labelNames: ['channel'] as const,
      registers: [this.registry],
    }),
    uploaded: new Counter({
      name: 'paygate_sepa_files_uploaded_total',
      help: 'pain.001 files uploaded to the bank (renamed into place), by channel',
      labelNames: ['channel'] as const,
      registers: [this.registry],
    }),
    applied: new Counter({
      name: 'paygate_sepa_files_applied_total',
      help: 'Bank files (pain.002, camt.054) read and applied, by channel',
      labelNames: ['channel'] as const,
      registers: [this.registry],
    }),
    set_aside: new Counter({
      name: 'paygate_sepa_files_set_aside_total',
      help: 'Bank files set aside (not parsed, or neither pain.002 nor camt.054): nothing in them applied',
      labelNames: ['channel'] as const,
      registers: [this.registry],
    }),
  };

  private readonly sepaStatuses = new Counter({
    name: 'paygate_sepa_statuses_total',
    help: "Statuses the bank's pain.002 gave, by channel, level (file: GrpSts, block: PmtInfSts, transaction: TxSts) and status (RCVD, ACTC, ACCP, ACSP, ACWC, PDNG, PART, ACSC, ACCC, RJCT, …)",
    labelNames: ['channel', 'level', 'status'] as const,
    registers: [this.registry],
  });

  private readonly sepaBatchBookings = new Counter({
    name: 'paygate_sepa_batch_bookings_total',
    help: 'Batch bookings read (one DBIT entry for a whole file sent), by channel and outcome: applied, or mismatch (count or total not the file’s: nothing applied)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly sepaCredits = new Counter({
    name: 'paygate_sepa_credits_total',
    help: 'Credit transfers received on a sepa-sftp channel’s account, by channel and outcome: matched (a payment by bank transfer settled) or unmatched (kept for the operator)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(queue: () => Promise<{ pending: number; oldestPendingAgeSeconds: number }>, sources: MetricSources = {}) {
    this.registry.registerMetric(ordersFinal);
    this.registry.registerMetric(ledgerPostings);
    const { nonces, pool, embeddedMemory, sepaUnacknowledged } = sources;
    if (sepaUnacknowledged) {
      new Gauge({
        name: 'paygate_sepa_oldest_unacknowledged_file_age_seconds',
        help: 'Per sepa-sftp channel, the age of the oldest pain.001 uploaded that the bank has said nothing of (0: none)',
        labelNames: ['channel'] as const,
        registers: [this.registry],
        async collect() {
          try {
            for (const { channel, ageSeconds } of await sepaUnacknowledged()) this.set({ channel }, ageSeconds);
          } catch {
            // Left at its last value while the database does not answer (see paygate_database_up).
          }
        },
      });
    }
    if (nonces) {
      new Gauge({
        name: 'paygate_auth_nonces',
        help: 'Rows in the request nonce store (used nonces kept until their signatures expire)',
        registers: [this.registry],
        async collect() {
          try {
            this.set(await nonces());
          } catch {
            // Left at its last value while the database does not answer (see paygate_database_up).
          }
        },
      });
    }
    if (pool) {
      const gauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
        new Gauge({
          name,
          help,
          registers: [this.registry],
          collect() {
            const stats = pool();
            if (stats) this.set(read(stats));
          },
        });
      gauge('paygate_db_pool_connections', 'Database connections open (idle or in use)', (s) => s.total);
      gauge('paygate_db_pool_idle_connections', 'Database connections open and idle', (s) => s.idle);
      gauge('paygate_db_pool_waiting_clients', 'Callers waiting for a database connection', (s) => s.waiting);
      gauge('paygate_db_pool_max_connections', 'The most database connections the pool opens', (s) => s.max);
      new Gauge({
        name: 'paygate_db_pipelined_statements',
        help: 'Statements sent and not yet answered on the pipelined database connection for reads or for writes',
        labelNames: ['connection'] as const,
        registers: [this.registry],
        collect() {
          const stats = pool();
          if (!stats) return;
          this.set({ connection: 'reads' }, stats.pipelined.reads);
          this.set({ connection: 'writes' }, stats.pipelined.writes);
        },
      });
    }
    if (embeddedMemory?.() !== undefined) {
      new Gauge({
        name: 'paygate_embedded_database_memory_bytes',
        help: "The embedded database's WebAssembly memory (PostgreSQL's shared buffers and allocations; it grows and is never returned)",
        registers: [this.registry],
        collect() {
          this.set(embeddedMemory() ?? 0);
        },
      });
    }
    // Queue gauges are read from the database when scraped, so every instance reports the shared
    // queue. A database that does not answer leaves them at their last value and sets
    // paygate_database_up to 0: the scrape itself still succeeds, so `up` keeps meaning "process up".
    type Queue = { pending: number; oldestPendingAgeSeconds: number };
    let last: Promise<Queue | undefined> | undefined;
    const read = () =>
      (last ??= queue()
        .catch(() => undefined)
        .finally(() => setTimeout(() => (last = undefined), 0)));
    new Gauge({
      name: 'paygate_webhook_queue_depth',
      help: 'Webhook events waiting for delivery',
      registers: [this.registry],
      async collect() {
        const stats = await read();
        if (stats) this.set(stats.pending);
      },
    });
    new Gauge({
      name: 'paygate_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest webhook event still waiting for delivery',
      registers: [this.registry],
      async collect() {
        const stats = await read();
        if (stats) this.set(stats.oldestPendingAgeSeconds);
      },
    });
    new Gauge({
      name: 'paygate_database_up',
      help: 'Whether the database answered the scrape-time queries (1) or not (0)',
      registers: [this.registry],
      async collect() {
        this.set((await read()) ? 1 : 0);
      },
    });
  }

  /** One answered HTTP request; `route` is the route template, never the raw URL. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  /** A merchant API request refused at verification step `step`. */
  authFailure(step: string): void {
    this.authFailures.inc({ step });
  }

  /** One call to a payment channel (the connector layer; see `channelSpan`). */
  channelCall(channel: string, operation: string, outcome: ChannelOutcome): void {
    this.channelCalls.inc({ channel, operation, outcome });
  }

  /** A SEPA file of `channel` built invalid, uploaded, applied or set aside (kind sepa-sftp). */
  sepaFile(channel: string, what: 'invalid' | 'uploaded' | 'applied' | 'set_aside'): void {
    this.sepaFiles[what].inc({ channel });
  }

  /** `times` statuses of `level` the bank's pain.002 gave on `channel`'s files. */
  sepaStatus(channel: string, level: string, status: string, times = 1): void {
    this.sepaStatuses.inc({ channel, level, status }, times);
  }

  /** Batch bookings of `channel` read, applied or mismatched. */
  sepaBatchBooking(channel: string, outcome: 'applied' | 'mismatch', times = 1): void {
    this.sepaBatchBookings.inc({ channel, outcome }, times);
  }

  /** Credit transfers received on `channel`'s account, matched or not. */
  sepaCredit(channel: string, outcome: 'matched' | 'unmatched', times = 1): void {
    this.sepaCredits.inc({ channel, outcome }, times);
  }

  attempt(outcome: 'delivered' | 'retry' | 'failed', latencyMs: number): void {
    this.deliveries.inc({ outcome });
    this.latency.observe(latencyMs / 1000);
  }
}
