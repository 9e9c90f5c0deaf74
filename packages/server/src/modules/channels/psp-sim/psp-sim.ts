import { randomUUID } from 'node:crypto';
import { sign, verify } from '@paygate/psp-simulator/auth';
import { z } from 'zod';
import { channelSpan } from '../../../observability/tracing.js';
import {
  type ChannelState,
  ChannelUnavailable,
  type ChannelUpdate,
  type Connector,
  type ConnectorContext,
  type NotificationCheck,
  type PayerAction,
} from '../connector.js';
import type { ChannelSettings } from '../../../channel-settings.js';

type PspSimSettings = Extract<ChannelSettings, { kind: 'psp-sim' }>;

const tradeNo = z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/);

const chargeSchema = z.object({
  id: tradeNo,
  reference: z.string(),
  status: z.enum(['open', 'paid', 'declined', 'expired', 'canceled']),
  amount: z.string().optional(),
  paidAmount: z.string().optional(),
  payer: z.object({ name: z.string().min(1).max(200).optional(), documentNumber: z.string().optional() }).optional(),
  payUrl: z.string().optional(),
  pixCode: z.string().optional(),
  boletoLine: z.string().optional(),
  bankDetails: z.record(z.string(), z.unknown()).optional(),
});

const transferSchema = z.object({
  id: tradeNo,
  reference: z.string(),
  status: z.enum(['queued', 'sent', 'rejected', 'canceled', 'returned']),
  returnId: tradeNo.optional(),
});

const notificationSchema = z.discriminatedUnion('type', [
  z.object({ id: z.string().min(1).max(128), type: z.literal('charge.updated'), object: chargeSchema }),
  z.object({ id: z.string().min(1).max(128), type: z.literal('transfer.updated'), object: transferSchema }),
]);

/** The platform status of a charge, or undefined while it is open. */
function chargeState(charge: z.infer<typeof chargeSchema>): ChannelState | undefined {
  switch (charge.status) {
    case 'open':
      return undefined;
    case 'paid':
      return {
        status: 'SUCCEEDED',
        channelTradeNo: charge.id,
        paidAmount: charge.paidAmount ?? charge.amount,
        payer: charge.payer,
      };
    case 'declined':
      return { status: 'FAILED', channelTradeNo: charge.id, failureReason: 'declined at the channel' };
    case 'expired':
      return { status: 'EXPIRED', channelTradeNo: charge.id };
    case 'canceled':
      // Withdrawn at the platform's request (cancelPayment): the platform moved the order itself.
      return undefined;
  }
}

/** The platform status of a transfer: queued is PROCESSING (the channel holds it, unsent). */
function transferState(transfer: z.infer<typeof transferSchema>): ChannelState | undefined {
  switch (transfer.status) {
    case 'queued':
      return { status: 'PROCESSING', channelTradeNo: transfer.id };
    case 'sent':
      return { status: 'SUCCEEDED', channelTradeNo: transfer.id };
    case 'rejected':
    case 'canceled':
      return { status: 'FAILED', channelTradeNo: transfer.id };
    case 'returned':
      return { status: 'REFUNDED', channelTradeNo: transfer.id, refundNo: transfer.returnId ?? `RT${transfer.id}` };
  }
}

function payerAction(charge: z.infer<typeof chargeSchema>): PayerAction {
  const url = charge.payUrl ?? '';
  if (charge.pixCode) return { kind: 'pix', url, pixCode: charge.pixCode };
  if (charge.boletoLine) return { kind: 'boleto', url, boletoLine: charge.boletoLine };
  if (charge.bankDetails) {
    const details = Object.fromEntries(Object.entries(charge.bankDetails).map(([k, v]) => [k, String(v)]));
    return { kind: 'bank', url, bankDetails: details };
  }
  return { kind: 'redirect', url };
}

/**
 * The connector of the reference simulator (`npx paygate-psp`, kind `psp-sim`): signed JSON calls
 * (auth from `@paygate/psp-simulator/auth`, the one implementation both sides use), each with a
 * timeout, traced with `channelSpan` and counted in paygate_channel_calls_total.
 */
export function pspSimConnector(settings: PspSimSettings, context: ConnectorContext): Connector {
  const { name } = settings;
  const notifyUrl = `${context.publicUrl}/channels/${name}/notifications`;

  /** One signed call; 404 answers `undefined`, other non-2xx and network failures throw ChannelUnavailable. */
  async function call(
    operation: string,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    accept: readonly number[] = [],
  ): Promise<{ status: number; json: unknown } | undefined> {
    return channelSpan(`${name}.${operation}`, async (span) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      const headers: Record<string, string> = sign(
        settings.secret,
        { method, path, body: text },
        { now: context.now(), nonce: randomUUID() },
      );
      if (body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      try {
        response = await fetch(`${settings.baseUrl}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : text,
          signal: AbortSignal.timeout(settings.timeoutMs),
          redirect: 'error',
        });
      } catch (error) {
        const timeout = (error as Error).name === 'TimeoutError';
        context.metrics?.channelCall(name, operation, timeout ? 'timeout' : 'error');
        throw new ChannelUnavailable(name, `${operation}: ${timeout ? 'timed out' : 'unreachable'}`, { cause: error });
      }
      span.setAttribute('http.response.status_code', response.status);
      const raw = await response.text().catch(() => '');
      if (response.status === 404 && method === 'GET') {
        context.metrics?.channelCall(name, operation, 'ok');
        return undefined;
      }
      if (!response.ok && !accept.includes(response.status)) {
        context.metrics?.channelCall(name, operation, 'error');
        throw new ChannelUnavailable(name, `${operation}: answered ${response.status}`);
      }
      let json: unknown;
      try {
        json = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        context.metrics?.channelCall(name, operation, 'error');
        throw new ChannelUnavailable(name, `${operation}: answered something that is not JSON`);
      }
      context.metrics?.channelCall(name, operation, 'ok');
      return { status: response.status, json };
    });
  }

  function parse<T>(schema: z.ZodType<T>, operation: string, json: unknown): T {
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new ChannelUnavailable(name, `${operation}: an answer the connector does not understand`);
    return parsed.data;
  }

  const byRef = (kind: 'charges' | 'transfers', order: { orderNo: string; channelTradeNo: string | null }) =>
    order.channelTradeNo !== null
      ? `/v1/${kind}/${encodeURIComponent(order.channelTradeNo)}`
      : `/v1/${kind}?reference=${encodeURIComponent(order.orderNo)}`;

  const connector: Connector = {
    kind: 'psp-sim',
    name,
    methods: settings.methods,
    payouts: settings.payouts,

    async createPayment(order) {
      const answer = await call('createPayment', 'POST', '/v1/charges', {
        reference: order.orderNo,
        amount: order.amount,
        currency: order.currency,
        method: order.method,
        notifyUrl,
        expiresAt: order.expiresAt,
        ...(order.returnUrl !== undefined ? { returnUrl: order.returnUrl } : {}),
      });
      const charge = parse(chargeSchema, 'createPayment', answer?.json);
      return { channelTradeNo: charge.id, payerAction: payerAction(charge) };
    },

    async queryPayment(order) {
      const answer = await call('queryPayment', 'GET', byRef('charges', order));
      return answer ? chargeState(parse(chargeSchema, 'queryPayment', answer.json)) : undefined;
    },

    async cancelPayment(order) {
      let id = order.channelTradeNo;
      if (id === null) {
        const found = await call('queryPayment', 'GET', byRef('charges', order));
        if (!found) return { kind: 'canceled' }; // never registered there: nothing can be paid
        id = parse(chargeSchema, 'queryPayment', found.json).id;
      }
      const path = `/v1/charges/${encodeURIComponent(id)}`;
      const answer = await call('cancelPayment', 'POST', `${path}/cancel`, {}, [409]);
      if (answer?.status === 200) return { kind: 'canceled' };
      // 409: the payer paid or declined first; what the channel says wins.
      const charge = parse(chargeSchema, 'queryPayment', (await call('queryPayment', 'GET', path))?.json);
      const state = chargeState(charge);
      return state && state.status !== 'EXPIRED' ? { kind: 'final', state } : { kind: 'canceled' };
    },

    async createPayout(order) {
      const payee: Record<string, string> = { name: order.payee.name, accountNumber: order.payee.accountNumber };
      if (order.payee.bankCode !== undefined) payee.bankCode = order.payee.bankCode;
      if (order.payee.documentNumber !== undefined) payee.documentNumber = order.payee.documentNumber;
      const answer = await call('createPayout', 'POST', '/v1/transfers', {
        reference: order.orderNo,
        amount: order.amount,
        currency: order.currency,
        payee,
        notifyUrl,
      });
      return { channelTradeNo: parse(transferSchema, 'createPayout', answer?.json).id };
    },

    async releasePayout(order) {
      let id = order.channelTradeNo;
      if (id === null) {
        const found = await call('queryPayout', 'GET', byRef('transfers', order));
        if (!found) return true; // never reached the channel: nothing to withdraw
        id = parse(transferSchema, 'queryPayout', found.json).id;
      }
      const answer = await call('releasePayout', 'POST', `/v1/transfers/${encodeURIComponent(id)}/cancel`, {}, [409]);
      return answer?.status === 200;
    },

    async queryPayout(order) {
      const answer = await call('queryPayout', 'GET', byRef('transfers', order));
      return answer ? transferState(parse(transferSchema, 'queryPayout', answer.json)) : undefined;
    },

    verifyNotification(raw, now): NotificationCheck {
      let nonce: { value: string; expiresAt: number } | undefined;
      const result = verify(
        settings.secret,
        { method: raw.method, path: raw.path, body: raw.body, headers: raw.headers },
        {
          now,
          // Recorded by the caller in the database (replays refused across instances).
          nonceSeen: (value, expiresAt) => {
            nonce = { value, expiresAt };
            return false;
          },
        },
      );
      if (!result.ok) return { ok: false, code: 'UNAUTHORIZED', reason: result.reason };
      let json: unknown;
      try {
        json = JSON.parse(raw.body.toString('utf8'));
      } catch {
        return { ok: false, code: 'VALIDATION_FAILED', reason: 'the body is not JSON' };
      }
      const parsed = notificationSchema.safeParse(json);
      if (!parsed.success)
        return { ok: false, code: 'VALIDATION_FAILED', reason: 'not a charge or transfer notification' };
      const event = parsed.data;
      const state = event.type === 'charge.updated' ? chargeState(event.object) : transferState(event.object);
      const updates: ChannelUpdate[] = state
        ? [
            {
              ...state,
              kind: event.type === 'charge.updated' ? 'payment' : 'payout',
              reference: event.object.reference,
              eventId: event.id,
            },
          ]
        : [];
      return { ok: true, nonce, eventId: event.id, updates };
    },
  };
  return connector;
}
