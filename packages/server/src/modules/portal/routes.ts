import type { Credentials, Overview, PortalSession as SessionView, RecoverResult } from '@paygate/wire';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError, validationFailed } from '../../errors.js';
import { success } from '../../http/errors.js';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/db.js';
import { rawTarget } from '../../http/merchant-api.js';
import { checkTimeRange, listQuery, merchantOrderNo, parseInput, parseQuery, unixMsParam } from '../../validation.js';
import type { Balances } from '../balances/service.js';
import { MAX_ACTIVE_KEYS, type Merchants } from '../merchants/service.js';
import type { PlatformKeys } from '../platform-keys/service.js';
import type { RejectedRequests } from '../rejected-requests/service.js';
import type { Audit, AuditContext } from '../audit/service.js';
import { accountApi, sessionOf as accountSessionOf } from '../accounts/routes.js';
import type { AccountMerchant, AccountSession, Accounts } from '../accounts/service.js';
import { sendInvitation } from '../accounts/mail.js';
import { capabilitiesOf, PORTAL_ACCESS, type Role, ROLES } from './access.js';
import { csvRow } from './csv.js';
import { RESEND_FAILED_MAX } from '../webhooks/service.js';
import { SEARCH_MAX } from '../../db/order-search.js';
import { CURRENCIES } from '../../catalog.js';
import { PAYMENT_REPORT_HEADER, PAYOUT_REPORT_HEADER, paymentReportRow, payoutReportRow } from './reports.js';
import { assertOrderNo, type OrderPageServices, paymentDetail, payoutDetail, refFromText } from './orders.js';

/** A portal session: a merchant's person, acting for that merchant. */
export type PortalSession = AccountSession<Role> & { readonly merchant: AccountMerchant };

/** The services the portal's API uses. */
export interface PortalServices extends OrderPageServices {
  readonly config: Config;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
  /** The portal's people (the accounts module, for the portal audience). */
  readonly portal: Accounts<Role>;
  readonly platformKeys: PlatformKeys;
  readonly merchants: Merchants;
  readonly balances: Balances;
  readonly rejectedRequests: RejectedRequests;
  readonly audit: Audit;
}

// List filters are the merchant API's (parseQuery: unknown, repeated and empty parameters are
// refused); the order number box takes a platform or merchant order number.
// `q` searches (db/order-search.ts): an order number, a merchant order number, a payer's or
// payee's name or document number, or an amount.
const orderListQuery = listQuery.extend({
  orderNo: z.string().trim().pipe(merchantOrderNo).optional(),
  q: z.string().max(SEARCH_MAX).optional(),
});
const ORDER_LIST_PARAMETERS = ['status', 'from', 'to', 'orderNo', 'q', 'pageSize', 'cursor'];

const ledgerQuery = listQuery.omit({ status: true }).extend({ currency: z.string().max(3).optional() });
const LEDGER_PARAMETERS = ['currency', 'from', 'to', 'pageSize', 'cursor'];
/** The ledger CSV export's filters: the ledger list's without paging (the export pages itself). */
const ledgerExportQuery = ledgerQuery.omit({ pageSize: true, cursor: true });
const EXPORT_PARAMETERS = ['currency', 'from', 'to'];

/** The request's query parameters, checked against `allowed`. */
const queryOf = (request: FastifyRequest, allowed: readonly string[]) => parseQuery(rawTarget(request).query, allowed);

const orderParam = z.object({ orderNo: z.string().max(64) });

// Request bodies, built once here: zod compiles an object schema's parser on its first parse, so a
// schema built inside a handler would be compiled again on every request.
/** POST /keys: a public key to add. */
const addKeyBody = z.object({ publicKey: z.string().max(1000) });
/** POST /keys/retire: the key to retire. */
const retireKeyBody = z.object({ key: z.string().max(200) });
/** The sandbox's simulated channel report on a payment. */
const simulatePaymentBody = z
  .object({ status: z.string().max(20), failureReason: z.string().max(200).optional() })
  .strict();
/** …and on a payout, which has no failure reason. */
const simulatePayoutBody = simulatePaymentBody.omit({ failureReason: true });
/** A body that must be the empty object. */
const emptyBody = z.object({}).strict();

/** The payouts report's period (Unix ms; the last 31 days by default) and currency. */
const reportQuery = z.object({
  from: unixMsParam.optional(),
  to: unixMsParam.optional(),
  currency: z.string().max(3).optional(),
});

/** Rows a CSV export holds at most; the portal says so next to the button. */
export const EXPORT_MAX_ROWS = 50_000;

/** The session of a request inside the authenticated scope: a portal session always has its merchant. */
const sessionOf = (request: FastifyRequest) => accountSessionOf(request) as PortalSession;

/** The audit context of the signed-in person making `request`: a portal user, by email. */
const actorOf = (request: FastifyRequest): AuditContext => ({
  actor: { kind: 'user', email: sessionOf(request).email },
  ip: request.ip,
  requestId: request.id,
});

/**
 * The portal's JSON API under `/portal/api`, for the portal web app only: cookie sessions, CSRF
 * tokens, and every read and write scoped to the session's merchant. It calls the same services
 * as the merchant API; another merchant's order is ORDER_NOT_FOUND, exactly like an unknown one.
 */
export async function portalApiRoutes(api: FastifyInstance, services: PortalServices): Promise<void> {
  const { portal, config } = services;
  const sessionView = (session: AccountSession<Role>): SessionView => {
    const { merchant } = session as PortalSession;
    return {
      email: session.email,
      role: session.role,
      capabilities: capabilitiesOf(session.role),
      secondFactor: session.secondFactor,
      merchant: { name: merchant.name, accessKey: merchant.accessKey, environment: merchant.environment },
      expiresAt: session.expiresAt,
      csrfToken: session.csrfToken,
    };
  };
  const door = {
    accounts: portal,
    access: PORTAL_ACCESS,
    publicUrl: config.publicUrl,
    now: services.now,
    view: sessionView,
  };
  await accountApi(api, door, (auth) => {
    // Credentials: the access key, the merchant's public keys, the platform's public keys.
    const credentials = async (session: PortalSession): Promise<Credentials> => {
      const body = await services.platformKeys.activeBodyKey();
      const webhookKeys = await services.platformKeys.publishedWebhookKeys();
      return {
        merchantName: session.merchant.name,
        accessKey: session.merchant.accessKey,
        environment: session.merchant.environment,
        maxActiveKeys: MAX_ACTIVE_KEYS,
        publicKeys: await services.merchants.keys(session.merchant.accessKey),
        bodyKey: { keyId: body.keyId, publicKey: body.publicKey },
        webhookKeys: webhookKeys.map((key) => ({
          keyid: key.keyId,
          publicKey: key.publicKey,
          status: key.status,
          createdAt: key.createdAt,
        })),
      };
    };
    auth.get('/credentials', async (request) => success(await credentials(sessionOf(request))));
    auth.post('/keys', async (request) => {
      const session = sessionOf(request);
      const { publicKey } = parseInput(addKeyBody, request.body);
      await services.merchants.addKey(session.merchant.accessKey, publicKey, (tx, { keyId }) =>
        services.audit.record(tx, actorOf(request), {
          action: 'key.added',
          merchant: session.merchant.accessKey,
          object: keyId,
        }),
      );
      return success(await credentials(session));
    });
    auth.post('/keys/retire', async (request) => {
      const session = sessionOf(request);
      const { key } = parseInput(retireKeyBody, request.body);
      await services.merchants.retireKey(session.merchant.accessKey, key, (tx, { keyId }) =>
        services.audit.record(tx, actorOf(request), {
          action: 'key.retired',
          merchant: session.merchant.accessKey,
          object: keyId,
        }),
      );
      return success(await credentials(session));
    });

    // Orders. An order number filter finds one order (by platform or merchant number), then
    // applies the other filters to it.
    const single = async <T extends { status: string; createdAt: number }>(
      find: () => Promise<T>,
      q: z.output<typeof orderListQuery>,
    ) => {
      let item: T;
      try {
        item = await find();
      } catch (error) {
        if (error instanceof DomainError && error.code === 'ORDER_NOT_FOUND') return { items: [], nextCursor: null };
        throw error;
      }
      const matches =
        (q.status === undefined || item.status === q.status) &&
        (q.from === undefined || item.createdAt >= q.from) &&
        (q.to === undefined || item.createdAt <= q.to);
      return { items: matches ? [item] : [], nextCursor: null };
    };
    const searchFilters = (q: z.output<typeof orderListQuery>) => {
      if (q.orderNo !== undefined) {
        throw validationFailed([{ field: 'q', message: 'give q or orderNo, not both (q finds order numbers too)' }]);
      }
      return { ...listFilters(q), q: q.q ?? '' };
    };
    const listFilters = (q: z.output<typeof orderListQuery>) => ({
      status: q.status,
      from: q.from,
      to: q.to,
      pageSize: q.pageSize,
      cursor: q.cursor,
    });

    auth.get('/payments', async (request) => {
      const merchantId = sessionOf(request).merchant.id;
      const q = parseInput(orderListQuery, queryOf(request, ORDER_LIST_PARAMETERS));
      if (q.q !== undefined) return success(await services.payments.search(merchantId, searchFilters(q)));
      if (q.orderNo !== undefined) {
        checkTimeRange(q);
        const ref = refFromText(q.orderNo, 'PAYMENT');
        return success(withTotal(await single(() => services.payments.get(merchantId, ref), q)));
      }
      const page = await services.payments.list(merchantId, listFilters(q));
      return success({ ...page, total: await services.payments.count(merchantId, q) });
    });
    auth.get('/payments/:orderNo', async (request) => {
      const { orderNo } = parseInput(orderParam, request.params);
      return success(await paymentDetail(services, sessionOf(request).merchant.id, orderNo));
    });

    auth.get('/payouts', async (request) => {
      const merchantId = sessionOf(request).merchant.id;
      const q = parseInput(orderListQuery, queryOf(request, ORDER_LIST_PARAMETERS));
      if (q.q !== undefined) return success(await services.payouts.search(merchantId, searchFilters(q)));
      if (q.orderNo !== undefined) {
        checkTimeRange(q);
        const ref = refFromText(q.orderNo, 'PAYOUT');
        return success(withTotal(await single(() => services.payouts.get(merchantId, ref), q)));
      }
      const page = await services.payouts.list(merchantId, listFilters(q));
      return success({ ...page, total: await services.payouts.count(merchantId, q) });
    });
    auth.get('/payouts/:orderNo', async (request) => {
      const { orderNo } = parseInput(orderParam, request.params);
      return success(await payoutDetail(services, sessionOf(request).merchant.id, orderNo));
    });

    // Money.
    auth.get('/balances', async (request) => {
      queryOf(request, []);
      return success(await services.balances.list(sessionOf(request).merchant.id));
    });
    auth.get('/ledger', async (request) => {
      const q = parseInput(ledgerQuery, queryOf(request, LEDGER_PARAMETERS));
      return success(await services.ledger.entries(sessionOf(request).merchant.id, q));
    });
    auth.get('/ledger/export.csv', async (request, reply) => {
      const merchantId = sessionOf(request).merchant.id;
      const q = parseInput(ledgerExportQuery, queryOf(request, EXPORT_PARAMETERS));
      let csv = csvRow([
        'entryId',
        'createdAt',
        'currency',
        'account',
        'amount',
        'transactionKind',
        'reference',
        'orderNo',
      ]);
      let cursor: string | undefined;
      for (let rows = 0; rows < EXPORT_MAX_ROWS;) {
        const page = await services.ledger.entries(merchantId, { ...q, pageSize: 100, cursor });
        for (const e of page.items) {
          csv += csvRow([
            e.entryId,
            new Date(e.createdAt).toISOString(),
            e.currency,
            e.account,
            e.amount,
            e.transactionKind,
            e.reference,
            e.orderNo,
          ]);
        }
        rows += page.items.length;
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      const stamp = new Date(services.now()).toISOString().slice(0, 10);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="ledger-${q.currency ?? 'all'}-${stamp}.csv"`)
        .send(csv);
    });

    // Sandbox integration help: the merchant's recent 401s with the signature base we built.
    auth.get('/rejected-requests', async (request) => {
      if (config.environment !== 'sandbox') throw new DomainError('NOT_FOUND', 'only in the sandbox');
      queryOf(request, []);
      return success(await services.rejectedRequests.list(sessionOf(request).merchant.id));
    });

    /** A report's period: `from`–`to` (Unix ms; the last 31 days without them), at most 366 days, a known currency. */
    const reportPeriod = (request: FastifyRequest) => {
      const q = parseInput(reportQuery, queryOf(request, ['from', 'to', 'currency']));
      const to = q.to ?? services.now();
      const from = q.from ?? to - 31 * DAY_MS;
      checkTimeRange({ from, to });
      if (to - from > 366 * DAY_MS) throw validationFailed([{ field: 'from', message: 'at most 366 days before to' }]);
      if (q.currency !== undefined && !CURRENCIES.has(q.currency)) {
        throw validationFailed([{ field: 'currency', message: `one of ${[...CURRENCIES.keys()].join(', ')}` }]);
      }
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      return { from, to, currency: q.currency, name: `${q.currency ?? 'all'}-${day(from)}-to-${day(to)}` };
    };

    // The payouts report: every payout created in a period, with its fee and its return.
    auth.get('/payouts/report.csv', async (request, reply) => {
      const merchantId = sessionOf(request).merchant.id;
      const period = reportPeriod(request);
      let csv = csvRow(PAYOUT_REPORT_HEADER);
      let cursor: string | undefined;
      for (let rows = 0; rows < EXPORT_MAX_ROWS;) {
        const page = await services.payouts.list(merchantId, {
          from: period.from,
          to: period.to,
          pageSize: 100,
          cursor,
        });
        for (const payout of page.items) {
          if (period.currency === undefined || payout.currency === period.currency)
            csv += csvRow(payoutReportRow(payout));
        }
        rows += page.items.length;
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="payouts-${period.name}.csv"`)
        .send(csv);
    });

    // The payments report, beside it: every payment created in a period, with what was paid.
    auth.get('/payments/report.csv', async (request, reply) => {
      const merchantId = sessionOf(request).merchant.id;
      const period = reportPeriod(request);
      let csv = csvRow(PAYMENT_REPORT_HEADER);
      let cursor: string | undefined;
      for (let rows = 0; rows < EXPORT_MAX_ROWS;) {
        const page = await services.payments.list(merchantId, {
          from: period.from,
          to: period.to,
          pageSize: 100,
          cursor,
        });
        for (const payment of page.items) {
          if (period.currency === undefined || payment.currency === period.currency) {
            csv += csvRow(paymentReportRow(payment));
          }
        }
        rows += page.items.length;
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="payments-${period.name}.csv"`)
        .send(csv);
    });

    registerAccountRoutes(auth, services);
    registerEventRoutes(auth, services);
    registerOverviewRoutes(auth, services);
    registerOrderActionRoutes(auth, services);
  });
}

/** A single-order answer (order number filter) with its total. */
const withTotal = <T>(page: { items: T[]; nextCursor: string | null }) => ({ ...page, total: page.items.length });

const DAY_MS = 86_400_000;
/** The overview's period: `from`/`to` (Unix ms), the last 7 days by default, at most 366 days. */
const periodQuery = z.object({ from: unixMsParam.optional(), to: unixMsParam.optional() });

/** The landing page: payments and payouts by status over a period, balances, recent delivery failures. */
function registerOverviewRoutes(auth: FastifyInstance, services: PortalServices): void {
  auth.get('/overview', async (request) => {
    const merchantId = sessionOf(request).merchant.id;
    const q = parseInput(periodQuery, queryOf(request, ['from', 'to']));
    const to = q.to ?? services.now();
    const from = q.from ?? to - 7 * DAY_MS;
    checkTimeRange({ from, to });
    if (to - from > 366 * DAY_MS) throw validationFailed([{ field: 'from', message: 'at most 366 days before to' }]);
    const failures = await services.webhooks.list(merchantId, { status: 'failed', pageSize: 5 });
    return success({
      from,
      to,
      payments: await services.payments.totals(merchantId, { from, to }),
      payouts: await services.payouts.totals(merchantId, { from, to }),
      balances: await services.balances.list(merchantId),
      failedEvents: await services.webhooks.count(merchantId, { status: 'failed' }),
      recentFailures: failures.items,
    } satisfies Overview);
  });
}

/** Cancel, and the sandbox's channel buttons: the same service methods as the merchant API's. */
function registerOrderActionRoutes(auth: FastifyInstance, services: PortalServices): void {
  const { payments, payouts, config } = services;
  const sandboxOnly = () => {
    if (config.environment !== 'sandbox') throw new DomainError('NOT_FOUND', 'only in the sandbox');
  };
  const orderNoOf = (request: FastifyRequest, type: 'PAYMENT' | 'PAYOUT') => {
    const { orderNo } = parseInput(orderParam, request.params);
    assertOrderNo(orderNo, type);
    return orderNo;
  };

  auth.post('/payments/:orderNo/cancel', async (request) => {
    const orderNo = orderNoOf(request, 'PAYMENT');
    const { merchant } = sessionOf(request);
    return success(
      await payments.cancel(
        merchant.id,
        { orderNo },
        (tx, canceled) =>
          services.audit.record(tx, actorOf(request), {
            action: 'order.canceled',
            merchant: merchant.accessKey,
            object: canceled.orderNo,
          }),
        undefined,
        'portal',
      ),
    );
  });

  /** The sandbox helpers' moves are portal writes: recorded as the person's, in the move's transaction. */
  const simulated =
    (request: FastifyRequest) =>
    (tx: Queryable, move: { orderNo: string; from: string; to: string }): Promise<void> =>
      services.audit.record(tx, actorOf(request), {
        action: 'sandbox.order_moved',
        merchant: sessionOf(request).merchant.accessKey,
        object: move.orderNo,
        detail: { from: move.from, to: move.to },
      });

  auth.post('/sandbox/payments/:orderNo/simulate', async (request) => {
    sandboxOnly();
    const orderNo = orderNoOf(request, 'PAYMENT');
    const body = parseInput(simulatePaymentBody, request.body);
    const { merchant } = sessionOf(request);
    return success(
      await payments.applyChannelReport(merchant.id, { ...body, orderNo }, null, undefined, simulated(request)),
    );
  });
  auth.post('/sandbox/payouts/:orderNo/simulate', async (request) => {
    sandboxOnly();
    const orderNo = orderNoOf(request, 'PAYOUT');
    const body = parseInput(simulatePayoutBody, request.body);
    const { merchant } = sessionOf(request);
    return success(
      await payouts.applyChannelReport(merchant.id, { ...body, orderNo }, null, undefined, simulated(request)),
    );
  });
  auth.post('/sandbox/payouts/:orderNo/return', async (request) => {
    sandboxOnly();
    const orderNo = orderNoOf(request, 'PAYOUT');
    parseInput(emptyBody, request.body);
    return success(await payouts.returnPayout(sessionOf(request).merchant.id, { orderNo }, null, simulated(request)));
  });
}

const eventListQuery = listQuery.extend({
  type: z.string().max(10).optional(),
  orderStatus: z.string().max(20).optional(),
});
const EVENT_LIST_PARAMETERS = ['status', 'type', 'orderStatus', 'from', 'to', 'pageSize', 'cursor'];
const recoverBody = z.object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() }).strict();

/**
 * The merchant's webhook events across orders, and re-sending them (same eventId and body, fresh
 * signature): one, or every failed one of a time range; delivery is the webhooks module's.
 */
function registerEventRoutes(auth: FastifyInstance, services: PortalServices): void {
  auth.get('/events', async (request) => {
    const merchantId = sessionOf(request).merchant.id;
    const q = parseInput(eventListQuery, queryOf(request, EVENT_LIST_PARAMETERS));
    const filters = { status: q.status, orderType: q.type, orderStatus: q.orderStatus, from: q.from, to: q.to };
    const page = await services.webhooks.list(merchantId, { ...filters, pageSize: q.pageSize, cursor: q.cursor });
    return success({ ...page, total: await services.webhooks.count(merchantId, filters) });
  });
  // Bounded: at most RESEND_FAILED_MAX events per call; `remaining` says whether to call again.
  auth.post('/events/recover', async (request) => {
    const range = parseInput(recoverBody, request.body);
    const { merchant } = sessionOf(request);
    const result = await services.webhooks.resendFailed(merchant.id, range, undefined, (tx, { resent }) =>
      services.audit.record(tx, actorOf(request), {
        action: 'events.recovered',
        merchant: merchant.accessKey,
        detail: { from: range.from, to: range.to, resent },
      }),
    );
    return success({ ...result, max: RESEND_FAILED_MAX } satisfies RecoverResult);
  });
  auth.post('/events/:eventId/resend', async (request) => {
    const { eventId } = request.params as { eventId: string };
    const { merchant } = sessionOf(request);
    return success(
      await services.webhooks.resend(eventId, merchant.id, (tx) =>
        services.audit.record(tx, actorOf(request), {
          action: 'event.resent',
          merchant: merchant.accessKey,
          object: eventId,
        }),
      ),
    );
  });
}

/** The audit trail's filters in the portal: person, action, time (Unix ms). */
const auditQuery = z.object({
  person: z.string().max(254).optional(),
  action: z.string().max(64).optional(),
  from: unixMsParam.optional(),
  to: unixMsParam.optional(),
});
const AUDIT_PARAMETERS = ['person', 'action', 'from', 'to'];
/** Entries the portal's audit page shows at most (the newest); the CSV export holds up to EXPORT_MAX_ROWS. */
export const AUDIT_PAGE_MAX = 500;
/** An invitation from the portal: the role is said, not defaulted. */
const portalInviteBody = z.object({ email: z.string().max(254), role: z.enum(ROLES) }).strict();

/**
 * The merchant's security setting, its people (invite, change a role, remove) and its audit
 * trail; the person's own account (sessions, password, second factor) is the accounts module's.
 */
function registerAccountRoutes(auth: FastifyInstance, services: PortalServices): void {
  const { portal, audit, config } = services;

  auth.get('/security', async (request) => success({ requireSecondFactor: sessionOf(request).secondFactor.required }));
  auth.post('/security', async (request) =>
    success(await portal.setRequireSecondFactor(sessionOf(request).merchant, request.body, actorOf(request))),
  );

  auth.get('/people', async (request) => {
    queryOf(request, []);
    return success(await portal.users(sessionOf(request).merchant.accessKey));
  });
  auth.post('/people', async (request) => {
    const { merchant } = sessionOf(request);
    const body = parseInput(portalInviteBody, request.body);
    const invitation = await portal.invite(merchant.accessKey, body, actorOf(request), true);
    // The setup link is a credential: it goes to the person invited, by email when SMTP is
    // configured, and nowhere else (not to the inviter, not to the log).
    let emailed = false;
    try {
      emailed = await sendInvitation(config, {
        to: invitation.email,
        invitedTo: portal.audience.invitedTo(merchant.name),
        role: invitation.role,
        setupUrl: portal.setupUrl(invitation),
        expiresAt: invitation.expiresAt,
      });
    } catch (error) {
      request.log.warn({ err: error, email: invitation.email }, 'the invitation email could not be sent');
    }
    return success({
      email: invitation.email,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      emailed,
      people: await portal.users(merchant.accessKey),
    });
  });
  auth.post('/people/role', async (request) =>
    success(await portal.setRole(sessionOf(request).merchant, request.body, actorOf(request))),
  );
  auth.post('/people/remove', async (request) =>
    success(await portal.remove(sessionOf(request).merchant, request.body, actorOf(request))),
  );

  const auditFilters = (request: FastifyRequest) => {
    const q = parseInput(auditQuery, queryOf(request, AUDIT_PARAMETERS));
    checkTimeRange(q);
    return {
      merchant: sessionOf(request).merchant.accessKey,
      actorEmail: q.person?.trim().toLowerCase() || undefined,
      action: q.action?.trim() || undefined,
      from: q.from,
      to: q.to,
    };
  };
  auth.get('/audit', async (request) => {
    const entries = await audit.list({ ...auditFilters(request), limit: AUDIT_PAGE_MAX });
    return success({ entries: entries.reverse(), max: AUDIT_PAGE_MAX });
  });
  auth.get('/audit/export.csv', async (request, reply) => {
    const entries = await audit.list({ ...auditFilters(request), limit: EXPORT_MAX_ROWS });
    let csv = csvRow(['id', 'at', 'actorKind', 'actorEmail', 'action', 'object', 'detail', 'ip', 'requestId']);
    for (const e of entries) {
      csv += csvRow([
        e.id,
        e.at,
        e.actor.kind,
        e.actor.email,
        e.action,
        e.object,
        e.detail === undefined ? undefined : JSON.stringify(e.detail),
        e.ip,
        e.requestId,
      ]);
    }
    const stamp = new Date(services.now()).toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${stamp}.csv"`)
      .send(csv);
  });
}
