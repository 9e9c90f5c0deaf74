import { z } from 'zod';
import { type Page, pageOf, unixMs } from './common.js';
import { Balance } from './money.js';
import { Payment } from './payments.js';
import { Payout, PayoutReceipt } from './payouts.js';
import { DeliveryStatus, WebhookEvent } from './webhooks.js';

// Views of the merchant portal's API (/portal/api), which the portal web app reads. They are not
// part of the merchant API's OpenAPI document (not registered as components).

/** One step of an order's life, newest last. */
export const TimelineEntry = z.object({ at: z.int(), status: z.string(), label: z.string() });
export type TimelineEntry = z.output<typeof TimelineEntry>;

/** One delivery attempt of a webhook event, as the order pages show it. */
export const PortalAttempt = z.object({
  at: unixMs('When the attempt started'),
  statusCode: z.int().nullable(),
  latencyMs: z.int().nullable(),
  responseExcerpt: z.string().nullable(),
  error: z.string().nullable(),
});
export type PortalAttempt = z.output<typeof PortalAttempt>;

/** A webhook event of an order, with the exact body sent and every delivery attempt. */
export const PortalOrderEvent = z.object({
  eventId: z.string(),
  status: z.string(),
  webhookUrl: z.string(),
  createdAt: unixMs('When the event was created'),
  body: z.string().meta({ description: 'The exact body sent (fixed at creation)' }),
  delivery: DeliveryStatus,
  nextAttemptAt: z.int().nullable(),
  attempts: z.array(PortalAttempt),
});
export type PortalOrderEvent = z.output<typeof PortalOrderEvent>;

/** The fee and net of a payment: booked on SUCCEEDED, else what the rate table would charge on the amount. */
export const PaymentCharges = z.object({ fee: z.string(), net: z.string(), booked: z.boolean() });
export type PaymentCharges = z.output<typeof PaymentCharges>;

/** `GET /portal/api/payments/:orderNo`. */
export const PaymentDetail = z.object({
  payment: Payment,
  charges: PaymentCharges,
  failureReason: z.string().nullable().meta({ description: 'Why a FAILED payment failed, when the channel said' }),
  timeline: z.array(TimelineEntry),
  events: z.array(PortalOrderEvent),
});
export type PaymentDetail = z.output<typeof PaymentDetail>;

/** `GET /portal/api/payouts/:orderNo`. */
/**
 * A payout paid out in a bank file (channel kind sepa-sftp): the file's MsgId and what the bank's
 * files said of the payout — its status code (pain.002 TxSts such as ACSC or RJCT, or BOOK once
 * booked), the reason code of a rejection or return (AC01, AC04, AB05, …), a return's reference,
 * and the statuses the bank gave on the way.
 */
export const PayoutBankFile = z.object({
  msgId: z.string(),
  /** A SEPA Instant file (`LclInstrm/Cd` `INST`). */
  instant: z.boolean(),
  bankStatus: z.string().nullable(),
  reasonCode: z.string().nullable(),
  returnReference: z.string().nullable(),
  /**
   * Every status the bank's pain.002 gave of the file (GrpSts), its payment information block
   * (PmtInfSts) and this payout (TxSts short of a final one: RCVD, ACTC, ACCP, ACSP, ACWC, PDNG),
   * oldest first.
   */
  statuses: z.array(
    z.object({
      at: z.int(),
      level: z.enum(['file', 'block', 'transaction']),
      status: z.string(),
      reason: z.string().nullable(),
    }),
  ),
});
export type PayoutBankFile = z.output<typeof PayoutBankFile>;

export const PayoutDetail = z.object({
  payout: Payout,
  receipt: PayoutReceipt,
  timeline: z.array(TimelineEntry),
  events: z.array(PortalOrderEvent),
  /** Only for a payout in a bank file. */
  bankFile: PayoutBankFile.optional(),
});
export type PayoutDetail = z.output<typeof PayoutDetail>;

/** A sandbox authentication failure, as the merchant sees it in the portal. */
export const RejectedRequest = z.object({
  requestId: z.string(),
  method: z.string(),
  path: z.string(),
  step: z.string(),
  reason: z.string(),
  signatureBase: z.string().nullable(),
  createdAt: z.int(),
});
export type RejectedRequest = z.output<typeof RejectedRequest>;

/** Orders of one status and currency in a period: how many, and their amount in major units. */
export const StatusTotal = z.object({ status: z.string(), currency: z.string(), count: z.int(), amount: z.string() });
export type StatusTotal = z.output<typeof StatusTotal>;

/** Sandbox or production: which platform the merchant is on. */
export const Environment = z.enum(['sandbox', 'production']);
export type Environment = z.output<typeof Environment>;

/** `GET /portal/api/session` (and sign-in): who is signed in, for which merchant, and the CSRF token. */
/** A person's role in the portal: what they may do (the server's modules/portal/access.ts). */
export const PortalRole = z.enum(['owner', 'developer', 'finance', 'viewer']);
export type PortalRole = z.output<typeof PortalRole>;

/** What a role may do, named by area; the web app hides what the session's role cannot use. */
export const PortalCapability = z.enum([
  'read',
  'self',
  'keys',
  'webhooks',
  'debugger',
  'payments',
  'exports',
  'people',
  'audit',
]);
export type PortalCapability = z.output<typeof PortalCapability>;

export const PortalSession = z.object({
  email: z.string(),
  role: PortalRole,
  capabilities: z.array(PortalCapability),
  secondFactor: z.object({
    enabled: z.boolean().meta({ description: 'The person has a second factor (TOTP or a passkey)' }),
    totp: z.boolean(),
    passkeys: z.boolean(),
    pending: z.boolean().meta({ description: 'The session waits for the code of its sign-in' }),
    checkedAt: z.int().nullable().meta({ description: "This session's last check of it (step-up after 5 minutes)" }),
    required: z.boolean().meta({ description: "The merchant's owners require one of everyone" }),
  }),
  merchant: z.object({ name: z.string(), accessKey: z.string(), environment: Environment }),
  expiresAt: z.int(),
  csrfToken: z.string().meta({ description: 'State-changing requests echo it in X-CSRF-Token' }),
});
export type PortalSession = z.output<typeof PortalSession>;

/** One of the signed-in person's sessions (`GET /portal/api/sessions`, the newest first). */
export const PortalSessionInfo = z.object({
  id: z.string(),
  current: z.boolean().meta({ description: 'The session of the request asking' }),
  device: z.string().meta({ description: 'The browser and system, read from the User-Agent ("Firefox on Linux")' }),
  userAgent: z.string().nullable(),
  ip: z.string().nullable(),
  createdAt: z.int(),
  lastSeenAt: z.int(),
});
export type PortalSessionInfo = z.output<typeof PortalSessionInfo>;

/** A teammate of the merchant, as the People page lists them (`GET /portal/api/people`). */
export const PortalPerson = z.object({
  email: z.string(),
  role: PortalRole,
  activated: z.boolean().meta({ description: 'The person has set a password' }),
  invitationExpiresAt: z.int().nullable().meta({ description: 'When the setup link of a pending invitation expires' }),
  createdAt: z.int(),
});
export type PortalPerson = z.output<typeof PortalPerson>;

/** An entry of the audit trail (`GET /portal/api/audit`, and `paygate audit list --json`). */
export const PortalAuditEntry = z.object({
  id: z.string(),
  at: z.string().meta({ description: 'ISO 8601' }),
  actor: z.object({ kind: z.enum(['user', 'operator', 'system']), email: z.string().optional() }),
  action: z.string(),
  merchant: z
    .string()
    .nullable()
    .meta({ description: "The merchant's access key, or null for a platform-wide change" }),
  object: z.string().optional(),
  detail: z.record(z.string(), z.unknown()).optional(),
  ip: z.string().optional(),
  requestId: z.string().optional(),
});
export type PortalAuditEntry = z.output<typeof PortalAuditEntry>;

/** One of the merchant's public keys. */
export const MerchantKey = z.object({
  id: z.string(),
  publicKey: z.string(),
  status: z.enum(['active', 'retired']),
  createdAt: z.int(),
  retiredAt: z.int().nullable(),
});
export type MerchantKey = z.output<typeof MerchantKey>;

/** `GET /portal/api/credentials`: the access key, the merchant's public keys, the platform's public keys. */
export const Credentials = z.object({
  merchantName: z.string(),
  accessKey: z.string(),
  environment: Environment,
  maxActiveKeys: z.int(),
  publicKeys: z.array(MerchantKey),
  bodyKey: z.object({ keyId: z.string(), publicKey: z.string() }),
  webhookKeys: z.array(
    z.object({ keyid: z.string(), publicKey: z.string(), status: z.enum(['active', 'enabled']), createdAt: z.int() }),
  ),
});
export type Credentials = z.output<typeof Credentials>;

/** `GET /portal/api/overview`: orders by status over a period, balances, recent delivery failures. */
export const Overview = z.object({
  from: z.int(),
  to: z.int(),
  payments: z.array(StatusTotal),
  payouts: z.array(StatusTotal),
  balances: z.array(Balance),
  failedEvents: z.int(),
  recentFailures: z.array(WebhookEvent),
});
export type Overview = z.output<typeof Overview>;

/** `POST /portal/api/events/recover`: how many failed events were resent, how many are left, the cap per call. */
export const RecoverResult = z.object({ resent: z.int(), remaining: z.int(), max: z.int() });
export type RecoverResult = z.output<typeof RecoverResult>;

/** A portal list page with the number of every match (not only this page's). */
export const countedPageOf = <T extends z.ZodType>(item: T) => pageOf(item).extend({ total: z.int() });
export type CountedPage<T> = Page<T> & { total: number };
