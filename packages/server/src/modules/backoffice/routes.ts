import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { DomainError, validationFailed } from '../../errors.js';
import { success } from '../../http/errors.js';
import { rawTarget } from '../../http/merchant-api.js';
import { REASON_PATTERN } from '../../proposals.js';
import { checkTimeRange, parseInput, parseQuery, unixMsParam } from '../../validation.js';
import { capabilitiesOf } from '../accounts/access.js';
import { sendInvitation } from '../accounts/mail.js';
import { accountApi, sessionOf } from '../accounts/routes.js';
import type { AccountSession, Accounts } from '../accounts/service.js';
import type { Adjustments } from '../adjustments/service.js';
import { onboardingView } from '../admin/routes.js';
import type { Audit, AuditContext } from '../audit/service.js';
import type { Balances } from '../balances/service.js';
import type { ChannelServices } from '../channels/apply.js';
import { receivedFileXml, sentFileXml } from '../channels/bank-files.js';
import { listNotifications } from '../channels/notifications.js';
import { configuredChannels, syncOrder } from '../channels/polling.js';
import { listMismatchedBatches, listSepaCredits, listSepaFiles } from '../channels/sepa-sftp/files.js';
import { isSepaSftp } from '../channels/sepa-sftp/sepa-sftp.js';
import type { Fees } from '../fees/service.js';
import type { Ledger } from '../ledger/service.js';
import type { Merchants } from '../merchants/service.js';
import type { PlatformKeys } from '../platform-keys/service.js';
import type { Role as PortalRole } from '../portal/access.js';
import { csvRow } from '../portal/csv.js';
import { dayOf, readSettlementText, reconcile, reconcileReceipts } from '../reconciliation/service.js';
import type { Webhooks } from '../webhooks/service.js';
import { OPERATOR_ACCESS, type OperatorRole, OPERATOR_ROLES } from './access.js';
import { maskValue } from './masking.js';
import { channelHealth } from './channels.js';
import { type BackofficeMerchantServices, merchantList, merchantPage } from './merchants.js';
import {
  type BackofficeOrderServices,
  ORDER_CSV_COLUMNS,
  ORDER_SEARCH_PARAMETERS,
  orderSearchQuery,
  orderStory,
  searchOrders,
} from './orders.js';

/** The services the back office's API uses. */
export interface BackofficeServices
  extends BackofficeOrderServices, BackofficeMerchantServices, Omit<ChannelServices, 'payments' | 'payouts'> {
  readonly config: Config;
  readonly db: Db;
  readonly now: () => number;
  /** The back office's operators (the accounts module, for the back office's audience). */
  readonly operators: Accounts<OperatorRole>;
  /** The portal's people: an operator invites a merchant's first owner. */
  readonly portal: Accounts<PortalRole>;
  readonly merchants: Merchants;
  readonly ledger: Ledger;
  readonly balances: Balances;
  readonly webhooks: Webhooks;
  readonly fees: Fees;
  readonly adjustments: Adjustments;
  readonly platformKeys: PlatformKeys;
  readonly audit: Audit;
}

/** A back-office session: an operator, who belongs to no merchant. */
type OperatorSession = AccountSession<OperatorRole>;

/** Rows a CSV export holds at most (the search's pages are read until then). */
export const BACKOFFICE_EXPORT_MAX_ROWS = 50_000;
/** Entries the audit page answers at most (the newest); the CSV export holds up to BACKOFFICE_EXPORT_MAX_ROWS. */
export const BACKOFFICE_AUDIT_MAX = 500;

const queryOf = (request: FastifyRequest, allowed: readonly string[]) => parseQuery(rawTarget(request).query, allowed);
const operatorOf = (request: FastifyRequest) => sessionOf(request) as OperatorSession;
/** Whether the operator sees documents and account numbers whole (masking.ts). */
const seesDocuments = (request: FastifyRequest) =>
  OPERATOR_ACCESS.capabilityRoles.documents.includes(operatorOf(request).role);

const emptyBody = z.object({}).strict();
const orderParam = z.object({ orderNo: z.string().max(64) });
const accessKeyParam = z.object({ accessKey: z.string().max(100) });
const idParam = z.object({ id: z.string().max(64) });
const channelParam = z.object({ name: z.string().max(100) });
const fileParam = channelParam.extend({ msgId: z.string().max(64) });
const receivedParam = channelParam.extend({ file: z.string().min(1).max(255) });
const bankExceptionsQuery = z.object({ channel: z.string().max(100).optional() });
const eventParam = z.object({ eventId: z.string().max(64) });
const operatorInviteBody = z.object({ email: z.string().max(254), role: z.enum(OPERATOR_ROLES) }).strict();
const merchantCreateBody = z.object({ name: z.string().max(200), publicKey: z.string().max(1000) }).strict();
const ownerInviteBody = z.object({ email: z.string().max(254) }).strict();
const replayBody = z
  .object({
    merchant: z.string().max(100),
    from: z.number().int().nonnegative(),
    to: z.number().int().nonnegative(),
    /** Why (the back office asks for it); kept in the audit entry with the count. */
    reason: z.string().trim().regex(REASON_PATTERN, '3 to 500 characters').optional(),
  })
  .strict();
const eventsQuery = z.object({
  status: z.string().max(20).optional(),
  type: z.string().max(10).optional(),
  merchant: z.string().max(100).optional(),
  from: unixMsParam.optional(),
  to: unixMsParam.optional(),
  pageSize: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().max(200).optional(),
});
const listMerchantsQuery = z.object({
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,18}$/)
    .optional(),
});
const adjustmentsQuery = z.object({ merchant: z.string().max(100).optional(), status: z.string().max(10).optional() });
const moneyQuery = z.object({
  day: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD')
    .optional(),
});
const feeProposalBody = z
  .object({ merchant: z.string().max(100), plan: z.record(z.string(), z.unknown()), reason: z.string().max(600) })
  .strict();
const reconciliationBody = z
  .object({
    channel: z.string().max(100),
    date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'YYYY-MM-DD'),
    /**
     * A settlement file's text, as `paygate reconcile` reads it: the CSV, or a bank's camt.054 (its
     * booked entries); without it, the channel's own list of the day.
     */
    settlement: z.string().max(5_000_000).optional(),
  })
  .strict();
const platformKeyRotateBody = z.object({ kind: z.enum(['body', 'webhook']) }).strict();
const platformKeyRetireBody = z.object({ keyId: z.string().max(100) }).strict();
const auditQuery = z.object({
  operator: z.string().max(254).optional(),
  merchant: z.string().max(100).optional(),
  action: z.string().max(64).optional(),
  from: unixMsParam.optional(),
  to: unixMsParam.optional(),
});

/**
 * The back office's JSON API under `/backoffice/api` (decisions.md, "Back office: the people who
 * run the platform"): the same conventions as the portal API's (cookie session, `csrfToken`,
 * `X-CSRF-Token` on writes, the same error shapes), over every merchant, for the platform's
 * operators only. Each route's role is in OPERATOR_ROUTE_ACCESS (access.ts), checked before it
 * runs; every write is in the audit trail with the operator's email, in its transaction.
 */
export async function backofficeApiRoutes(api: FastifyInstance, services: BackofficeServices): Promise<void> {
  const { operators, config } = services;
  const view = (session: OperatorSession) => ({
    email: session.email,
    role: session.role,
    capabilities: capabilitiesOf(OPERATOR_ACCESS, session.role),
    secondFactor: session.secondFactor,
    expiresAt: session.expiresAt,
    csrfToken: session.csrfToken,
  });
  const door = { accounts: operators, access: OPERATOR_ACCESS, publicUrl: config.publicUrl, now: services.now, view };
  await accountApi(api, door, (auth, actorOf) => {
    operatorRoutes(auth, services, actorOf);
    orderRoutes(auth, services, actorOf);
    merchantRoutes(auth, services, actorOf);
    moneyRoutes(auth, services, actorOf);
    channelRoutes(auth, services);
    eventRoutes(auth, services, actorOf);
    platformKeyRoutes(auth, services, actorOf);
    auditRoutes(auth, services);
  });
}

type ActorOf = (request: FastifyRequest) => AuditContext;

/** A UTC day `YYYY-MM-DD` as [from, to) in Unix ms; VALIDATION_FAILED naming `field` when it is no day. */
function dayRange(date: string, field: string): { from: number; to: number } {
  try {
    return dayOf(date);
  } catch (error) {
    throw validationFailed([{ field, message: (error as Error).message }]);
  }
}

/**
 * An invitation's setup link goes to the person invited by email when SMTP is configured, and
 * otherwise only to the operator who asked (the answer), never to the log.
 */
async function deliverInvitation(
  request: FastifyRequest,
  config: Config,
  mail: { to: string; invitedTo: string; role: string; setupUrl: string; expiresAt: number },
): Promise<{ emailed: boolean; setupUrl?: string }> {
  let emailed = false;
  try {
    emailed = await sendInvitation(config, mail);
  } catch (error) {
    request.log.warn({ err: error, email: mail.to }, 'the invitation email could not be sent');
  }
  return emailed ? { emailed } : { emailed, setupUrl: mail.setupUrl };
}

/** Operators: invite (or reset), change a role, remove; the last admin stays. */
function operatorRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  const { operators, config } = services;
  auth.get('/operators', async (request) => {
    queryOf(request, []);
    return success({ operators: await operators.users(null) });
  });
  auth.post('/operators', async (request) => {
    const body = parseInput(operatorInviteBody, request.body);
    const invitation = await operators.invite(null, body, actorOf(request), true);
    const delivered = await deliverInvitation(request, config, {
      to: invitation.email,
      invitedTo: operators.audience.invitedTo(undefined),
      role: invitation.role,
      setupUrl: operators.setupUrl(invitation),
      expiresAt: invitation.expiresAt,
    });
    return success({
      email: invitation.email,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      ...delivered,
      operators: await operators.users(null),
    });
  });
  auth.post('/operators/role', async (request) =>
    success({ operators: await operators.setRole(null, request.body, actorOf(request)) }),
  );
  auth.post('/operators/remove', async (request) =>
    success({ operators: await operators.remove(null, request.body, actorOf(request)) }),
  );
}

/** The search across every merchant, its CSV, one order's story, and asking its channel again. */
function orderRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  auth.get('/orders', async (request) => {
    const search = parseInput(orderSearchQuery, queryOf(request, ORDER_SEARCH_PARAMETERS));
    return success(await searchOrders(services, search, seesDocuments(request)));
  });
  auth.get('/orders/export.csv', async (request, reply) => {
    const search = parseInput(
      orderSearchQuery.omit({ cursor: true, pageSize: true }),
      queryOf(
        request,
        ORDER_SEARCH_PARAMETERS.filter((p) => p !== 'cursor' && p !== 'pageSize'),
      ),
    );
    let csv = csvRow(ORDER_CSV_COLUMNS.map(([header]) => header));
    let cursor: string | undefined;
    for (let rows = 0; rows < BACKOFFICE_EXPORT_MAX_ROWS;) {
      const page = await searchOrders(services, { ...search, pageSize: 100, cursor }, seesDocuments(request));
      for (const item of page.items) csv += csvRow(ORDER_CSV_COLUMNS.map(([, cell]) => cell(item)));
      rows += page.items.length;
      if (page.nextCursor === undefined) break;
      cursor = page.nextCursor;
    }
    const stamp = new Date(services.now()).toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="orders-${stamp}.csv"`)
      .send(csv);
  });
  auth.get('/orders/:orderNo', async (request) => {
    const { orderNo } = parseInput(orderParam, request.params);
    queryOf(request, []);
    return success(await orderStory(services, orderNo, seesDocuments(request)));
  });
  // What `paygate channels sync` does: the order's channel asked now, its answer applied as polling
  // applies it (the move's cause is the channel's answer); the operator's asking is audited.
  auth.post('/orders/:orderNo/sync', async (request) => {
    const { orderNo } = parseInput(orderParam, request.params);
    parseInput(emptyBody, request.body ?? {});
    const result = await syncOrder(services, configuredChannels(services), orderNo);
    const served =
      (orderNo.startsWith('P')
        ? await services.payments.servedBy(orderNo)
        : await services.payouts.servedBy(orderNo)) ?? undefined;
    const merchant = served && (await services.merchants.profiles([served.merchantId])).get(served.merchantId);
    await services.audit.recordAlone(actorOf(request), {
      action: 'order.synced',
      merchant: merchant?.accessKey ?? null,
      object: orderNo,
      detail: {
        channel: result.channel,
        channelStatus: result.channelStatus,
        before: result.before,
        after: result.after,
      },
    });
    return success(result);
  });
}

/** A merchant of this environment by access key, with its id (NOT_FOUND otherwise). */
async function merchantByKey(services: BackofficeServices, accessKey: string) {
  const id = await services.merchants.findId(accessKey);
  if (id === undefined) throw new DomainError('NOT_FOUND', 'no such merchant');
  return { id, accessKey };
}

const accessKeysOf = (services: BackofficeServices) => async (ids: readonly bigint[]) =>
  new Map([...(await services.merchants.profiles(ids))].map(([id, profile]) => [id, profile.accessKey]));
const accessKeyOf = (services: BackofficeServices) => async (id: bigint, tx?: Queryable) => {
  const profile = await services.merchants.profile(id, tx);
  if (!profile) throw new DomainError('NOT_FOUND', 'no such merchant');
  return profile.accessKey;
};

/** Merchants: the list, one merchant's page, create, disable and enable, its first owner, its fee plan. */
function merchantRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  const { merchants, config } = services;
  auth.get('/merchants', async (request) => {
    const { cursor } = parseInput(listMerchantsQuery, queryOf(request, ['cursor']));
    return success(await merchantList(services, cursor === undefined ? undefined : BigInt(cursor)));
  });
  auth.post('/merchants', async (request) => {
    const input = parseInput(merchantCreateBody, request.body);
    const { accessKey } = await merchants.create(input.name, input.publicKey, (tx, { accessKey: created }) =>
      services.audit.record(tx, actorOf(request), {
        action: 'merchant.created',
        merchant: created,
        detail: { name: input.name.trim() },
      }),
    );
    return success(await onboardingView(services, accessKey));
  });
  auth.get('/merchants/:accessKey', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    queryOf(request, []);
    return success(await merchantPage(services, await merchantByKey(services, accessKey)));
  });
  for (const [path, disabled] of [
    ['/merchants/:accessKey/disable', true],
    ['/merchants/:accessKey/enable', false],
  ] as const) {
    auth.post(path, async (request) => {
      const { accessKey } = parseInput(accessKeyParam, request.params);
      parseInput(emptyBody, request.body ?? {});
      return success(
        await merchants.setDisabled(accessKey, disabled, (tx) =>
          services.audit.record(tx, actorOf(request), {
            action: disabled ? 'merchant.disabled' : 'merchant.enabled',
            merchant: accessKey,
          }),
        ),
      );
    });
  }
  // A merchant's first owner (or any owner): a portal invitation, its link to the person or the asker.
  auth.post('/merchants/:accessKey/invite', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    const { email } = parseInput(ownerInviteBody, request.body);
    const invitation = await services.portal.invite(accessKey, { email, role: 'owner' }, actorOf(request));
    const profile = await merchants.profile(await merchants.idOf(accessKey));
    const delivered = await deliverInvitation(request, config, {
      to: invitation.email,
      invitedTo: services.portal.audience.invitedTo(profile?.name),
      role: invitation.role,
      setupUrl: services.portal.setupUrl(invitation),
      expiresAt: invitation.expiresAt,
    });
    return success({
      email: invitation.email,
      role: invitation.role,
      expiresAt: invitation.expiresAt,
      existingUser: invitation.existing,
      ...delivered,
    });
  });
  auth.get('/merchants/:accessKey/fees', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    queryOf(request, []);
    const merchant = await merchantByKey(services, accessKey);
    return success({
      ...(await services.fees.planOf(merchant.id)),
      changes: await services.fees.changes(merchant.id, accessKeysOf(services)),
    });
  });

  // Fee plans: one operator proposes a merchant's whole plan, another approves it.
  auth.get('/fee-changes', async (request) => {
    const { merchant } = parseInput(adjustmentsQuery.pick({ merchant: true }), queryOf(request, ['merchant']));
    const id = merchant === undefined ? undefined : (await merchantByKey(services, merchant)).id;
    return success({ changes: await services.fees.changes(id, accessKeysOf(services)) });
  });
  auth.post('/fee-changes', async (request) => {
    const body = parseInput(feeProposalBody, request.body);
    const merchant = await merchantByKey(services, body.merchant);
    return success(
      await services.fees.propose(
        merchant,
        { plan: body.plan, reason: body.reason },
        operatorOf(request).email,
        actorOf(request),
        services.audit,
      ),
    );
  });
  for (const decision of ['approve', 'reject'] as const) {
    auth.post(`/fee-changes/:id/${decision}`, async (request) => {
      const { id } = parseInput(idParam, request.params);
      return success(
        await services.fees.decide(
          id,
          decision,
          request.body,
          operatorOf(request).email,
          actorOf(request),
          services.audit,
          accessKeyOf(services),
        ),
      );
    });
  }
}

/** Money: the platform's totals and the day's volume, balance adjustments, reconciliation. */
function moneyRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  auth.get('/money', async (request) => {
    const { day } = parseInput(moneyQuery, queryOf(request, ['day']));
    const range = dayRange(day ?? new Date(services.now()).toISOString().slice(0, 10), 'day');
    return success({
      totals: await services.ledger.platformTotals(),
      day: { ...range, volume: await services.ledger.volume(range.from, range.to) },
    });
  });
  auth.get('/adjustments', async (request) => {
    const q = parseInput(adjustmentsQuery, queryOf(request, ['merchant', 'status']));
    if (q.status !== undefined && !['PROPOSED', 'BOOKED', 'REJECTED'].includes(q.status)) {
      throw validationFailed([{ field: 'status', message: 'one of PROPOSED, BOOKED, REJECTED' }]);
    }
    const merchantId = q.merchant === undefined ? undefined : (await merchantByKey(services, q.merchant)).id;
    return success({
      adjustments: await services.adjustments.list({ merchantId, status: q.status }, accessKeysOf(services)),
    });
  });
  auth.post('/adjustments', async (request) =>
    success(
      await services.adjustments.propose(
        (accessKey) => merchantByKey(services, accessKey),
        request.body,
        operatorOf(request).email,
        actorOf(request),
      ),
    ),
  );
  for (const decision of ['approve', 'reject'] as const) {
    auth.post(`/adjustments/:id/${decision}`, async (request) => {
      const { id } = parseInput(idParam, request.params);
      return success(
        await services.adjustments.decide(
          id,
          decision,
          request.body,
          operatorOf(request).email,
          actorOf(request),
          accessKeyOf(services),
        ),
      );
    });
  }
  // Reconciliation of one channel's day: against a settlement file given, or the channel's own
  // list of the day's received payments (kind pix-api). Changes nothing; the run is audited.
  auth.post('/reconciliation', async (request) => {
    const body = parseInput(reconciliationBody, request.body);
    const connector = services.channels.get(body.channel);
    if (!connector) throw validationFailed([{ field: 'channel', message: 'no such channel' }]);
    const day = dayRange(body.date, 'date');
    let report;
    if (body.settlement !== undefined) {
      let file;
      try {
        file = readSettlementText(body.settlement);
      } catch (error) {
        throw validationFailed([{ field: 'settlement', message: (error as Error).message }]);
      }
      report = await reconcile(services.db, body.channel, body.date, file.lines, file.booked);
    } else {
      if (!connector.receivedBetween) {
        throw validationFailed([
          {
            field: 'settlement',
            message: `channel ${body.channel} keeps no list of its day: give its settlement file`,
          },
        ]);
      }
      report = await reconcileReceipts(
        services.db,
        body.channel,
        body.date,
        await connector.receivedBetween(day.from, day.to),
      );
    }
    await services.audit.recordAlone(actorOf(request), {
      action: 'reconciliation.run',
      merchant: null,
      object: body.channel,
      detail: { date: body.date, matched: report.matched, mismatches: report.mismatches.length },
    });
    return success(report);
  });
}

/** Channels: each one's health, its notifications, and its bank files with their XML. */
function channelRoutes(auth: FastifyInstance, services: BackofficeServices): void {
  const named = (request: FastifyRequest) => {
    const { name } = parseInput(channelParam, request.params);
    const connector = services.channels.get(name);
    if (!connector) throw new DomainError('NOT_FOUND', 'no such channel');
    return connector;
  };
  auth.get('/channels', async (request) => {
    queryOf(request, []);
    return success({ channels: await channelHealth(services) });
  });
  auth.get('/channels/:name/notifications', async (request) => {
    const connector = named(request);
    queryOf(request, []);
    const records = await listNotifications(services, connector.name);
    // A notification's body may name the payer: whole only to the roles that see documents.
    return success({
      notifications: seesDocuments(request) ? records : records.map(({ body: _body, ...rest }) => rest),
    });
  });
  /** `?channel=`: one sepa-sftp channel's (404 for another kind or none), else every one's. */
  const fileChannelOf = (request: FastifyRequest) => {
    const { channel } = parseInput(bankExceptionsQuery, queryOf(request, Object.keys(bankExceptionsQuery.shape)));
    if (channel === undefined) return undefined;
    const connector = services.channels.get(channel);
    if (!connector || !isSepaSftp(connector)) throw new DomainError('NOT_FOUND', 'no such file channel');
    return connector.name;
  };
  // Credit transfers received that matched no payment by bank transfer, across the file channels,
  // newest first: the reason, amount, reference, booking date and the account booked to; the
  // payer's account masked to the roles that do not see account numbers whole.
  auth.get('/channels/credits', async (request) => {
    const credits = await listSepaCredits(services.db, fileChannelOf(request));
    const whole = seesDocuments(request);
    return success({
      credits: credits.map((credit) => ({
        ...credit,
        debtorIban: credit.debtorIban === null || whole ? credit.debtorIban : maskValue(credit.debtorIban),
      })),
    });
  });
  // Batch bookings that did not match the file they name (nothing applied), across the file
  // channels, newest first: the file's MsgId and PmtInfId, the count and total booked against the
  // count and control sum of the file sent.
  auth.get('/channels/batch-bookings', async (request) => {
    return success({ batchBookings: await listMismatchedBatches(services.db, fileChannelOf(request)) });
  });
  // The files a file channel sent (with the bank's group status) and received (applied, or set
  // aside with the reason).
  auth.get('/channels/:name/files', async (request) => {
    const connector = named(request);
    queryOf(request, []);
    if (!isSepaSftp(connector)) throw new DomainError('NOT_FOUND', 'this channel exchanges no files');
    const files = await listSepaFiles(services.db, connector.name);
    return success({ ...files, setAside: files.received.filter((file) => file.state === 'set_aside') });
  });
  auth.get('/channels/:name/files/:msgId/xml', async (request, reply: FastifyReply) => {
    const { name, msgId } = parseInput(fileParam, request.params);
    queryOf(request, []);
    const file = await sentFileXml(services.db, name, msgId);
    if (!file) throw new DomainError('NOT_FOUND', 'no such file');
    return reply
      .type('application/xml; charset=utf-8')
      .header('content-disposition', `attachment; filename="${file.name.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
      .send(file.bytes);
  });
  // A file received from the bank (by its name in the download directory), as it was read; its
  // bytes are kept RECEIVED_FILES_KEPT_MS (then NOT_FOUND, saying so: the record of it stays).
  auth.get('/channels/:name/received/:file/xml', async (request, reply: FastifyReply) => {
    const { name, file: fileName } = parseInput(receivedParam, request.params);
    queryOf(request, []);
    const file = await receivedFileXml(services.db, name, fileName);
    if (!file) throw new DomainError('NOT_FOUND', 'no such file');
    if (!file.bytes) throw new DomainError('NOT_FOUND', 'the file is no longer kept (received files are kept 30 days)');
    return reply
      .type('application/xml; charset=utf-8')
      .header('content-disposition', `attachment; filename="${file.name.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
      .send(file.bytes);
  });
}

/** Webhook events across merchants: failing deliveries, the replay of a merchant's, one resend. */
function eventRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  auth.get('/events', async (request) => {
    const q = parseInput(eventsQuery, queryOf(request, Object.keys(eventsQuery.shape)));
    const merchantId = q.merchant === undefined ? undefined : (await merchantByKey(services, q.merchant)).id;
    const page = await services.webhooks.listAll({
      merchantId,
      status: q.status,
      orderType: q.type,
      from: q.from,
      to: q.to,
      pageSize: q.pageSize ?? 50,
      cursor: q.cursor,
    });
    const keys = await accessKeysOf(services)([...new Set(page.items.map((item) => item.merchantId))]);
    return success({
      items: page.items.map(({ merchantId: id, ...item }) => ({ ...item, merchant: keys.get(id) ?? '' })),
      nextCursor: page.nextCursor,
    });
  });
  auth.post('/events/replay', async (request) => {
    const body = parseInput(replayBody, request.body);
    checkTimeRange(body);
    if (body.to <= body.from) throw validationFailed([{ field: 'to', message: 'after from' }]);
    const merchant = await merchantByKey(services, body.merchant);
    return success(
      await services.webhooks.replayFailed(merchant.id, body, (tx, { count }) =>
        services.audit.record(tx, actorOf(request), {
          action: 'events.replayed',
          merchant: merchant.accessKey,
          detail: {
            from: body.from,
            to: body.to,
            count,
            ...(body.reason === undefined ? {} : { reason: body.reason }),
          },
        }),
      ),
    );
  });
  auth.post('/events/:eventId/resend', async (request) => {
    const { eventId } = parseInput(eventParam, request.params);
    parseInput(emptyBody, request.body ?? {});
    return success(
      await services.webhooks.resend(eventId, undefined, async (tx, { merchantId }) =>
        services.audit.record(tx, actorOf(request), {
          action: 'event.resent',
          merchant: await accessKeyOf(services)(merchantId, tx),
          object: eventId,
        }),
      ),
    );
  });
}

/** The platform's body and webhook keys: listed, rotated, retired. */
function platformKeyRoutes(auth: FastifyInstance, services: BackofficeServices, actorOf: ActorOf): void {
  auth.get('/platform-keys', async (request) => {
    queryOf(request, []);
    return success({ keys: await services.platformKeys.list() });
  });
  auth.post('/platform-keys/rotate', async (request) => {
    const { kind } = parseInput(platformKeyRotateBody, request.body);
    return success(
      await services.platformKeys.rotate(kind, (tx, { keyId }) =>
        services.audit.record(tx, actorOf(request), {
          action: 'platform-key.rotated',
          merchant: null,
          object: keyId,
          detail: { kind },
        }),
      ),
    );
  });
  auth.post('/platform-keys/retire', async (request) => {
    const { keyId } = parseInput(platformKeyRetireBody, request.body);
    return success(
      await services.platformKeys.retire(keyId, (tx) =>
        services.audit.record(tx, actorOf(request), { action: 'platform-key.retired', merchant: null, object: keyId }),
      ),
    );
  });
}

/** The whole audit trail, by operator, merchant, action and time; its CSV; its chain's verification. */
function auditRoutes(auth: FastifyInstance, services: BackofficeServices): void {
  const filters = (request: FastifyRequest) => {
    const q = parseInput(auditQuery, queryOf(request, Object.keys(auditQuery.shape)));
    checkTimeRange(q);
    const operator = q.operator?.trim().toLowerCase();
    return {
      ...(operator ? { actorKind: 'operator' as const, actorEmail: operator } : {}),
      merchant: q.merchant?.trim() || undefined,
      action: q.action?.trim() || undefined,
      from: q.from,
      to: q.to,
    };
  };
  auth.get('/audit', async (request) => {
    const entries = await services.audit.list({ ...filters(request), limit: BACKOFFICE_AUDIT_MAX });
    return success({ entries: entries.reverse(), max: BACKOFFICE_AUDIT_MAX });
  });
  auth.get('/audit/export.csv', async (request, reply) => {
    const entries = await services.audit.list({ ...filters(request), limit: BACKOFFICE_EXPORT_MAX_ROWS });
    let csv = csvRow([
      'id',
      'at',
      'actorKind',
      'actorEmail',
      'action',
      'merchant',
      'object',
      'detail',
      'ip',
      'requestId',
    ]);
    for (const e of entries) {
      csv += csvRow([
        e.id,
        e.at,
        e.actor.kind,
        e.actor.email,
        e.action,
        e.merchant,
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
  auth.get('/audit/verify', async (request) => {
    queryOf(request, []);
    return success(await services.audit.verify());
  });
}
