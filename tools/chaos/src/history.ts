/**
 * What the campaign saw, kept for the checker: every API attempt, every order a flow created
 * with what it asked of the channel and what the channel answered, every status a read showed,
 * and every fault with its times.
 */
import type { Attempt } from './client.js';

export type ChannelName = 'sandbox' | 'psp' | 'pix' | 'bank';
export type OrderType = 'PAYMENT' | 'PAYOUT';

/** An action that decides an order's fate at its channel, and what came of asking for it. */
export interface Intent {
  /** `CREDIT`: a bank transfer sent that must settle nothing (another amount, a second one, an unknown reference). */
  readonly action: 'SUCCEEDED' | 'FAILED' | 'EXPIRED' | 'CANCELED' | 'RETURN' | 'CREDIT';
  readonly at: number;
  /** `ok`: done (answered 200 / `{"ok": true}`); `refused`: a 4xx said no; `unknown`: no answer. */
  outcome: 'ok' | 'refused' | 'unknown';
  detail?: string;
}

/** A status as an answer showed it: sent at `sentAt`, answered at `answeredAt`. */
export interface Observation {
  readonly status: string;
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly source: 'create' | 'query' | 'list';
}

export interface OrderRecord {
  readonly merchant: string;
  readonly type: OrderType;
  readonly channel: ChannelName;
  readonly merchantOrderNo: string;
  readonly currency: string;
  readonly amount: string;
  orderNo?: string;
  /** The orderNo of every 200 answer to a create of this merchantOrderNo (repeats included). */
  readonly createAnswers: string[];
  /** Whether the flow sent this create again after a 200, on purpose. */
  repeated: boolean;
  confirmed?: 'ok' | 'unknown';
  readonly intents: Intent[];
  readonly observations: Observation[];
  /** The pix charge's txid (channelTradeNo while open). */
  txid?: string;
  /** A payment by bank transfer's ISO 11649 reference (`bankTransfer.reference`). */
  reference?: string;
}

export interface FaultRecord {
  readonly id: number;
  readonly kind: string;
  readonly target: string;
  readonly startedAt: number;
  healedAt?: number;
  /** When the probe for this kind first succeeded after the heal. */
  recoveredAt?: number;
  /** Why it did not recover within the bound, when it did not. */
  unrecovered?: string;
  readonly detail: Record<string, unknown>;
}

export class History {
  readonly attempts: Attempt[] = [];
  readonly orders: OrderRecord[] = [];
  readonly faults: FaultRecord[] = [];
  /** Problems the flows met that are a rule broken on the spot (an answer no rule allows). */
  readonly anomalies: string[] = [];
  readonly startedAt = Date.now();

  record = (attempt: Attempt): void => {
    this.attempts.push(attempt);
  };

  order(record: Omit<OrderRecord, 'createAnswers' | 'repeated' | 'intents' | 'observations'>): OrderRecord {
    const full: OrderRecord = { ...record, createAnswers: [], repeated: false, intents: [], observations: [] };
    this.orders.push(full);
    return full;
  }

  anomaly(text: string): void {
    if (this.anomalies.length < 500) this.anomalies.push(`${new Date().toISOString()} ${text}`);
  }
}
