/**
 * The connector layer: every channel (the built-in sandbox, a payment service provider, a bank)
 * is one Connector. The services never talk to a channel directly: routing picks a connector
 * (registry.ts), the connector registers orders at its channel and turns what the channel says
 * (notifications, query answers) into ChannelUpdates, and `applyUpdate` (apply.ts) moves the
 * orders through the same service methods the sandbox helpers use.
 */
import type { PayerAction } from '@paygate/wire';
import type { Db } from '../../db/db.js';
import type { FieldError } from '../../errors.js';
import type { Metrics } from '../../observability/metrics.js';

/** The statuses a channel can report, in the platform's names. */
export type ChannelStatus = 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'EXPIRED' | 'REFUNDED';

/** The payer as the channel reported it. */
export interface ChannelPayer {
  name?: string | undefined;
  documentNumber?: string | undefined;
}

/**
 * What a channel says about one order, as answered by a query: undefined from a query means
 * "nothing final or new" (still open at the channel).
 */
export interface ChannelState {
  readonly status: ChannelStatus;
  /** The channel's own id of the order (charge or transfer id). */
  readonly channelTradeNo?: string | undefined;
  /** Payments, SUCCEEDED: what the payer paid (decimal string in the order's currency). */
  readonly paidAmount?: string | undefined;
  /** Payments: the payer, from the channel only. */
  readonly payer?: ChannelPayer | undefined;
  /** Payouts, REFUNDED: the channel's return id (becomes the payout's refundNo). */
  readonly refundNo?: string | undefined;
  /** Payments, FAILED: why, when the channel said. */
  readonly failureReason?: string | undefined;
}

/** One change the channel reports (a notification may carry several; polling builds one per answer). */
export interface ChannelUpdate extends ChannelState {
  readonly kind: 'payment' | 'payout';
  /** The platform's orderNo the channel was given as its reference. */
  readonly reference: string;
  /** The channel's event id: an update is applied once per (channel, eventId). Polling uses `poll:<orderNo>:<status>`. */
  readonly eventId: string;
}

/** What the payer needs to pay: where to go, and the method's own instructions (the wire schema). */
export type { PayerAction };

/** A payment order as a connector sees it when registering it. */
export interface ChannelPaymentOrder {
  readonly orderNo: string;
  /**
   * The merchant's own identity of the order (its merchant and merchantOrderNo): the same on
   * every create of one order, also when a create refused for its channel being unavailable is
   * retried and gets a new orderNo. A channel keying its charges on it finds a charge made
   * before a timeout again.
   */
  readonly merchantRef: string;
  readonly currency: string;
  /** Decimal string in the currency's scale. */
  readonly amount: string;
  readonly method: string;
  /**
   * When the platform expires the order if unpaid (unix ms). A channel that can should stop
   * taking payment then too, so nothing is paid at the channel for an order expired here.
   */
  readonly expiresAt: number;
  readonly returnUrl?: string | undefined;
}

/**
 * What withdrawing a payment at its channel came to: `canceled` when the channel will take no
 * payment for it (withdrawn now, withdrawn or expired before, or never registered there);
 * `final` when the payer got there first (paid or declined): the state to apply instead.
 */
export type CancelOutcome = { readonly kind: 'canceled' } | { readonly kind: 'final'; readonly state: ChannelState };

/** A payout order as a connector sees it when sending it. */
export interface ChannelPayoutOrder {
  readonly orderNo: string;
  readonly currency: string;
  readonly amount: string;
  readonly payee: {
    readonly name: string;
    readonly accountNumber: string;
    readonly bankCode?: string | undefined;
    readonly documentNumber?: string | undefined;
  };
}

/**
 * A channel's own rules for a payee, checked at create before anything is reserved: the payee as
 * the channel keeps it (an IBAN without its spaces, upper-cased), or the fields it refuses
 * (named as the request names them: `payee.accountNumber`).
 */
export type PayeeCheck =
  | { readonly ok: true; readonly payee: Partial<ChannelPayoutOrder['payee']> }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

/** A reference to an order already at the channel. */
export interface ChannelOrderRef {
  readonly orderNo: string;
  readonly channelTradeNo: string | null;
}

/** A notification as received: the exact bytes and the request line, for authentication. */
export interface RawNotification {
  readonly method: string;
  /** Path with its raw query, as received. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/**
 * The result of authenticating a notification. `nonce` must still be recorded (and refused when
 * already recorded) by the caller, in the database, so replays are refused across instances.
 */
export type NotificationCheck =
  | {
      readonly ok: true;
      readonly nonce: { readonly value: string; readonly expiresAt: number } | undefined;
      readonly eventId: string;
      readonly updates: readonly ChannelUpdate[];
    }
  | {
      readonly ok: false;
      /** UNAUTHORIZED: not authenticated (nothing recorded); VALIDATION_FAILED: authenticated but not a notification this connector understands. */
      readonly code: 'UNAUTHORIZED' | 'VALIDATION_FAILED';
      readonly reason: string;
    };

/**
 * A callback that is only a hint (kind pix-api: the API Pix callback carries no signature): the
 * channel's ids of the charges it names, each to be asked about at the channel before anything
 * is applied; or why the body is not such a callback.
 */
export type HintCheck =
  { readonly ok: true; readonly tradeNos: readonly string[] } | { readonly ok: false; readonly reason: string };

/** One payment the channel received on a day, as its own list says (reconciliation without a file). */
export interface ChannelReceipt {
  /** The channel's id of the payment received (pix-api: the endToEndId). */
  readonly channelTradeNo: string;
  /** The id the charge had while open (pix-api: the txid), when the channel says. */
  readonly chargeId?: string | undefined;
  /** Decimal string in the order's currency. */
  readonly amount: string;
  readonly at: number;
}

/** A channel could not be reached, or answered something unusable: nothing is known to have happened there. */
export class ChannelUnavailable extends Error {
  constructor(
    readonly channel: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ChannelUnavailable';
  }
}

/** One channel. */
export interface Connector {
  /** The connector kind (`sandbox`, `psp-sim`). */
  readonly kind: string;
  /** The channel's name (from PAYGATE_CHANNELS; `sandbox` for the built-in one). */
  readonly name: string;
  /** The payment methods it serves. */
  readonly methods: readonly { readonly currency: string; readonly code: string }[];
  /** The currencies it pays out in. */
  readonly payouts: readonly string[];
  /** Registers a payment at the channel (idempotent on orderNo); throws ChannelUnavailable. */
  createPayment(order: ChannelPaymentOrder): Promise<{ channelTradeNo: string | undefined; payerAction: PayerAction }>;
  /** What the channel says about a payment; undefined while it is open there (or unknown to it). */
  queryPayment(order: ChannelOrderRef): Promise<ChannelState | undefined>;
  /**
   * Withdraws a payment the platform no longer accepts: the merchant canceled it, or it expired.
   * Optional: a channel without it is only told by the expiry given at registration, and a
   * cancel or expiry here then trusts that nothing is paid there afterwards. Throws
   * ChannelUnavailable (the order then stays as it is: the cancel is refused, the expiry retried).
   */
  cancelPayment?(order: ChannelOrderRef): Promise<CancelOutcome>;
  /**
   * The channel's rules for a payee (kind sepa-sftp: an IBAN, a BIC, a name of 1–70 characters),
   * asked at create: a payee refused is 400 VALIDATION_FAILED naming the field, nothing reserved.
   */
  validatePayee?(payee: ChannelPayoutOrder['payee']): PayeeCheck;
  /** Sends a payout to the channel (idempotent on orderNo); throws ChannelUnavailable. */
  createPayout(order: ChannelPayoutOrder): Promise<{ channelTradeNo: string | undefined }>;
  /** Withdraws a payout not yet sent; false when the channel has already acted on it. */
  releasePayout(order: ChannelOrderRef): Promise<boolean>;
  /**
   * What the channel says about a payout: PROCESSING while it holds it unsent, undefined when it
   * does not know the order (never sent there).
   */
  queryPayout(order: ChannelOrderRef): Promise<ChannelState | undefined>;
  /** Authenticates and parses a notification; the built-in sandbox channel refuses all. */
  verifyNotification(raw: RawNotification, now: number): NotificationCheck;
  /**
   * Channels whose callbacks are unsigned hints (`POST /channels/{name}/notifications/pix`):
   * reads the charges a callback names. Nothing in it is applied: each is asked about first.
   */
  readHint?(body: Buffer): HintCheck;
  /**
   * Configures at the channel what the platform needs of it, at every start (pix-api: its
   * webhook). Idempotent; throws ChannelUnavailable (the platform retries later).
   */
  prepare?(): Promise<void>;
  /** The payments the channel received in [from, to) (unix ms), from its own list (pix-api: `GET /pix`). */
  receivedBetween?(from: number, to: number): Promise<readonly ChannelReceipt[]>;
  /**
   * Channels that pay out by files (sepa-sftp): the file a payout went in and what the bank's
   * files said of it (the portal shows it); undefined while it is in no file.
   */
  payoutFile?(orderNo: string): Promise<PayoutFile | undefined>;
  /** Releases the connector's connections (shutdown). */
  close?(): Promise<void>;
}

/** A payout's bank file and the bank's word on it (the wire's PayoutBankFile). */
export interface PayoutFile {
  readonly msgId: string;
  /** A SEPA Instant file. */
  readonly instant: boolean;
  readonly bankStatus: string | null;
  readonly reasonCode: string | null;
  readonly returnReference: string | null;
  /** Every status the bank gave of the file, its block and this payout, oldest first (intermediate ones included). */
  readonly statuses: {
    readonly at: number;
    readonly level: 'file' | 'block' | 'transaction';
    readonly status: string;
    readonly reason: string | null;
  }[];
}

/** What a connector needs from the platform around it. */
export interface ConnectorContext {
  readonly publicUrl: string;
  readonly metrics: Pick<Metrics, 'channelCall'> | undefined;
  readonly now: () => number;
  /**
   * The platform's database, for connectors that keep records of their own (kind sepa-sftp: the
   * files sent and read, in the channels module's tables). Undefined where nothing is stored.
   */
  readonly db?: Db | undefined;
}
