/** What the back office's API (/backoffice/api) answers: the server's views, as JSON. */

export type OperatorRole = 'admin' | 'support' | 'finance' | 'auditor';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['admin', 'support', 'finance', 'auditor'];
export type OperatorCapability =
  'read' | 'self' | 'operators' | 'merchants' | 'platform-keys' | 'support' | 'money' | 'files' | 'audit' | 'documents';

export interface OperatorSession {
  readonly email: string;
  readonly role: OperatorRole;
  readonly capabilities: readonly OperatorCapability[];
  readonly secondFactor: {
    readonly enabled: boolean;
    readonly totp: boolean;
    readonly passkeys: boolean;
    readonly pending: boolean;
    readonly checkedAt: number | null;
    readonly required: boolean;
  };
  readonly expiresAt: number;
  readonly csrfToken: string;
}

export interface OrderItem {
  readonly orderNo: string;
  readonly orderType: 'PAYMENT' | 'PAYOUT';
  readonly merchant: { readonly accessKey: string; readonly name: string };
  readonly merchantOrderNo: string;
  readonly status: string;
  readonly currency: string;
  readonly amount: string;
  readonly createdAt: number;
  readonly method: string | null;
  readonly channel: string | null;
  readonly channelTradeNo: string | null;
  readonly counterparty: {
    readonly name: string | null;
    readonly documentNumber: string | null;
    readonly accountNumber: string | null;
  };
}

export type TimelineEntry =
  | { at: number; kind: 'status'; from: string | null; to: string; cause: string | null }
  | {
      at: number;
      kind: 'event';
      eventId: string;
      status: string;
      deliveryStatus: string;
      webhookUrl: string;
      body: string;
    }
  | {
      at: number;
      kind: 'webhook';
      eventId: string;
      attempt: number;
      httpStatus: number | null;
      error?: string;
      latencyMs: number;
      responseExcerpt: string | null;
    }
  | {
      at: number;
      kind: 'ledger';
      transactionId: string;
      transactionKind: string;
      reference: string;
      entries: { account: string; owner: string; currency: string; amount: string }[];
    }
  | {
      at: number;
      kind: 'channel';
      direction: 'sent';
      channel: string;
      operation: string;
      sent: unknown;
      answered?: unknown;
      error?: string;
      latencyMs: number;
    }
  | {
      at: number;
      kind: 'channel';
      direction: 'received';
      channel: string;
      operation: 'notification';
      eventId: string;
      outcome: string;
      detail: string | null;
      body?: string;
    }
  | {
      at: number;
      kind: 'bank_file';
      channel: string;
      msgId: string;
      name: string;
      state: string;
      groupStatus: string | null;
      transactions: number;
      controlSum: string;
    }
  | {
      at: number;
      kind: 'bank_status';
      msgId: string;
      status: string | null;
      reason: string | null;
      returnReference: string | null;
    };

/** An order's whole story: the merchant's view of the order, its merchant and its timeline. */
export interface OrderStory extends Record<string, unknown> {
  readonly orderNo: string;
  readonly orderType: 'PAYMENT' | 'PAYOUT';
  readonly merchantOrderNo: string;
  readonly status: string;
  readonly currency: string;
  readonly amount: string;
  readonly createdAt: number;
  readonly channel: string | null;
  readonly merchant: { readonly accessKey: string; readonly name: string; readonly disabled: boolean };
  readonly timeline: readonly TimelineEntry[];
}

export interface Volume {
  readonly currency: string;
  readonly count: number;
  readonly amount: string;
}

export interface BalanceView {
  readonly currency: string;
  readonly available: string;
  readonly reserved?: string;
  readonly [key: string]: unknown;
}

export interface MerchantItem {
  readonly accessKey: string;
  readonly name: string;
  readonly environment: string;
  readonly disabled: boolean;
  readonly createdAt: number;
  readonly volume: { from: number; to: number; payments: readonly Volume[]; payouts: readonly Volume[] };
  readonly balances: readonly BalanceView[];
}

export interface EventView {
  readonly eventId: string;
  readonly orderType: string;
  readonly orderNo: string;
  readonly status: string;
  readonly deliveryStatus: string;
  readonly attempts: number;
  readonly createdAt: number;
  readonly deliveredAt: number | null;
  readonly nextAttemptAt: number | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly merchant?: string;
}

export interface Person {
  readonly email: string;
  readonly role: string;
  readonly activated: boolean;
  readonly invitationExpiresAt: number | null;
  readonly createdAt: number;
}

export interface FeePlan {
  payments?: Record<string, Record<string, { percent: string; fixed: string }>>;
  payouts?: Record<string, { percent: string; fixed: string }>;
}

export interface FeeChange {
  readonly changeId: string;
  readonly merchant: string;
  readonly plan: FeePlan;
  readonly reason: string;
  readonly status: 'PROPOSED' | 'APPLIED' | 'REJECTED';
  readonly proposedBy: string;
  readonly proposedAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly decisionNote: string | null;
}

export interface Adjustment {
  readonly adjustmentId: string;
  readonly merchant: string;
  readonly currency: string;
  readonly amount: string;
  readonly reason: string;
  readonly status: 'PROPOSED' | 'BOOKED' | 'REJECTED';
  readonly proposedBy: string;
  readonly proposedAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly decisionNote: string | null;
}

export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: { readonly kind: string; readonly email?: string };
  readonly action: string;
  readonly merchant: string | null;
  readonly object?: string;
  readonly detail?: Record<string, unknown>;
  readonly ip?: string;
}
