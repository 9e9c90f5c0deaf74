/** What the portal API (/portal/api) returns: the server's views, as JSON. */
import type * as wire from '@paygate/wire';

export type Environment = wire.Environment;
export type Session = wire.PortalSession;
export type Role = wire.PortalRole;
export type Capability = wire.PortalCapability;

/** A teammate, as the People page lists them. */
export type Person = wire.PortalPerson;
/** One of the person's sessions. */
export type SessionInfo = wire.PortalSessionInfo;
/** An entry of the audit trail. */
export type AuditEntry = wire.PortalAuditEntry;
export type MerchantKey = wire.MerchantKey;
export type Credentials = wire.Credentials;
export type Page<T> = wire.Page<T>;

/** The merchant API's views, which the portal API answers too: the wire schemas' types. */
export type Payer = wire.Payer;
export type Payment = wire.Payment;
export type Payout = wire.Payout;
export type Receipt = wire.PayoutReceipt;
export type Balance = wire.Balance;
export type LedgerEntry = wire.LedgerEntry;
/** A webhook event in the list across orders. */
export type EventSummary = wire.WebhookEvent;
/** The order pages' views. */
export type TimelineEntry = wire.TimelineEntry;
export type Attempt = wire.PortalAttempt;
export type WebhookEvent = wire.PortalOrderEvent;
export type PaymentCharges = wire.PaymentCharges;
export type PaymentDetail = wire.PaymentDetail;
export type PayoutDetail = wire.PayoutDetail;
export type RejectedRequest = wire.RejectedRequest;
export type StatusTotal = wire.StatusTotal;

/** A list page with the number of every match (not only this page's). */
export type CountedPage<T> = wire.CountedPage<T>;
export type Overview = wire.Overview;
export type RecoverResult = wire.RecoverResult;

/**
 * What the pages before an app (door.tsx, the sign-in and second-factor pages) read of a session;
 * the portal's and the back office's both have it.
 */
export interface DoorSession {
  readonly csrfToken: string;
  readonly secondFactor: {
    readonly enabled: boolean;
    readonly totp: boolean;
    readonly passkeys: boolean;
    /** The session waits for the code of its sign-in. */
    readonly pending: boolean;
    /** Always of an operator; of a merchant's people when its owners say so. */
    readonly required: boolean;
  };
}
