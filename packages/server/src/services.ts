import type { Config } from './config.js';
import { loadMasterKeys, secretSealer } from './crypto/master-key.js';
import type { Db, Queryable } from './db/db.js';
import { Nonces } from './modules/auth/service.js';
import { Balances } from './modules/balances/service.js';
import { type ChannelRegistry, channelRegistry } from './modules/channels/registry.js';
import { unacknowledgedFileAges } from './modules/channels/sepa-sftp/files.js';
import { Ledger } from './modules/ledger/service.js';
import { Merchants } from './modules/merchants/service.js';
import { type PaymentHooks, Payments } from './modules/payments/service.js';
import { Payouts } from './modules/payouts/service.js';
import { PlatformKeys } from './modules/platform-keys/service.js';
import { Accounts } from './modules/accounts/service.js';
import { OPERATOR_AUDIENCE, type OperatorRole } from './modules/backoffice/access.js';
import { PORTAL_AUDIENCE, type Role as PortalRole } from './modules/portal/access.js';
import { Adjustments } from './modules/adjustments/service.js';
import { Audit } from './modules/audit/service.js';
import { Fees } from './modules/fees/service.js';
import { RejectedRequests } from './modules/rejected-requests/service.js';
import { Metrics } from './observability/metrics.js';
import type { WebhookOptions } from './modules/webhooks/delivery.js';
import { Webhooks } from './modules/webhooks/service.js';

/** Everything the HTTP layer, the workers and the operator API share, built once per process. */
export interface Services {
  readonly config: Config;
  readonly db: Db;
  /** Milliseconds since the epoch; injected so tests can drive time. */
  readonly now: () => number;
  readonly platformKeys: PlatformKeys;
  readonly merchants: Merchants;
  readonly payments: Payments;
  readonly nonces: Nonces;
  readonly ledger: Ledger;
  readonly payouts: Payouts;
  readonly balances: Balances;
  readonly fees: Fees;
  /** Merchant portal users, sign-in and sessions (the accounts module, for the portal's audience). */
  readonly portal: Accounts<PortalRole>;
  /** The platform's operators: the back office's accounts (the same module, for its audience). */
  readonly operators: Accounts<OperatorRole>;
  /** Balance adjustments: proposed by one operator, booked when another approves. */
  readonly adjustments: Adjustments;
  /** The audit trail: every change, by whom, hash-chained. */
  readonly audit: Audit;
  /** Sandbox authentication failures, kept for the merchant's portal. */
  readonly rejectedRequests: RejectedRequests;
  /** Webhook delivery: the dispatcher step, event listing and resend. */
  readonly webhooks: Webhooks;
  readonly metrics: Metrics;
  /** The channels (PAYGATE_CHANNELS and the built-in sandbox channel) and routing to them. */
  readonly channels: ChannelRegistry;
}

export interface ServiceOptions {
  readonly now?: () => number;
  /** The current master key, when the caller has it already (tests); otherwise loaded from config. */
  readonly masterKey?: Buffer;
  /** Extra payment hooks; the ledger's credit on SUCCEEDED always runs first. */
  readonly paymentHooks?: PaymentHooks;
  /** Webhook delivery tuning: DNS resolution, timeouts, jitter (tests inject these). */
  readonly webhooks?: Omit<WebhookOptions, 'observer'>;
}

/** Builds the services over an open, migrated database. */
export function createServices(config: Config, db: Db, options: ServiceOptions = {}): Services {
  const now = options.now ?? Date.now;
  const masterKeys = loadMasterKeys(config, options.masterKey);
  const sealer = secretSealer(masterKeys);
  // A merchant's own fee plan over the platform's table decides what its orders are charged.
  const fees = new Fees(config, db, now);
  const feeSchedule = (q: Queryable, merchantId: bigint) => fees.schedule(q, merchantId);
  const ledger = new Ledger(db, config, now, feeSchedule);
  const extraHooks = options.paymentHooks ?? {};
  // A SUCCEEDED payment credits the merchant in the transaction that moves it (PaymentHooks).
  const paymentHooks: PaymentHooks = {
    onSucceeded: async (tx, payment) => {
      await ledger.creditPayment(tx, payment);
      await extraHooks.onSucceeded?.(tx, payment);
    },
    onSucceededMany: async (tx, payments, at) => {
      await ledger.creditPayments(tx, payments, at);
      for (const payment of payments) await extraHooks.onSucceeded?.(tx, payment);
    },
  };
  const platformKeys = new PlatformKeys(db, config.environment, sealer, now, masterKeys.source);
  // The queue gauges read the outbox when scraped, by which time `webhooks` exists.
  const nonces = new Nonces(db, now);
  const sepaChannels = config.channels.filter((c) => c.kind === 'sepa-sftp').map((c) => c.name);
  const metrics: Metrics = new Metrics(() => webhooks.queueStats(), {
    nonces: () => nonces.count(),
    pool: () => db.poolStats(),
    embeddedMemory: () => db.embeddedMemoryBytes(),
    ...(sepaChannels.length > 0 ? { sepaUnacknowledged: () => unacknowledgedFileAges(db, now(), sepaChannels) } : {}),
  });
  const webhooks: Webhooks = new Webhooks(db, config, platformKeys, now, {
    ...options.webhooks,
    observer: metrics,
  });
  const channels = channelRegistry(config, { metrics, now, db });
  // Disabling a merchant ends its portal sessions in the same transaction (`portal` exists by then).
  const merchants: Merchants = new Merchants(db, config.environment, now, {
    onDisabled: (tx, merchantId) => portal.endSessions(tx, merchantId),
  });
  const audit = new Audit(db, now);
  const portal: Accounts<PortalRole> = new Accounts(db, config, PORTAL_AUDIENCE, merchants, audit, sealer, now);
  const operators = new Accounts(db, config, OPERATOR_AUDIENCE, merchants, audit, sealer, now);
  return {
    config,
    db,
    channels,
    now,
    webhooks,
    metrics,
    platformKeys,
    merchants,
    payments: new Payments(db, config, paymentHooks, now, channels),
    nonces,
    ledger,
    payouts: new Payouts(db, config, ledger, now, channels, feeSchedule),
    balances: new Balances(ledger),
    fees,
    portal,
    operators,
    audit,
    adjustments: new Adjustments(db, ledger, audit, now),
    rejectedRequests: new RejectedRequests(db, (accessKey) => merchants.idOfAnyEnvironment(accessKey), now),
  };
}
