import { createHash } from 'node:crypto';
import { Cob, type CobPatchBody, type CobPutBody, PixList, Problem, TxId, WebhookCallbackBody } from '@paygate/pix';
import type { z } from 'zod';
import {
  type CancelOutcome,
  type ChannelReceipt,
  type ChannelState,
  ChannelUnavailable,
  type Connector,
  type ConnectorContext,
  type HintCheck,
} from '../connector.js';
import type { ChannelSettings } from '../../../channel-settings.js';
import { PixApiClient } from './client.js';

type PixApiSettings = Extract<ChannelSettings, { kind: 'pix-api' }>;

/** Pages of `GET /pix` asked for at most (1,000 Pix each): a day of a very busy account. */
const MAX_PIX_PAGES = 100;
/** Charges one callback may name; a provider groups a few, more is not a callback. */
const MAX_HINTED = 1_000;

/**
 * The txid of an order's charge: 32 hex characters (within the API Pix's 26–35 of
 * `[a-zA-Z0-9]`) hashed from the merchant's identity of the order, so a repeated create — even
 * one retried after a timeout under a new orderNo — asks for the same charge and finds the one
 * made before. The deployment's public URL and the channel name are hashed in too: two
 * platforms sharing one provider account never ask for each other's charges.
 */
export function pixTxid(publicUrl: string, channel: string, merchantRef: string): string {
  return createHash('sha256').update(`pix-api\n${publicUrl}\n${channel}\n${merchantRef}`).digest('hex').slice(0, 32);
}

/** The platform state a charge stands for; undefined while it is open (or withdrawn by the platform itself). */
export function cobState(cob: Cob): ChannelState | undefined {
  switch (cob.status) {
    case 'ATIVA':
    case 'REMOVIDA_PELO_USUARIO_RECEBEDOR':
      // Open; or removed at the platform's own request (cancel, expiry), which moved the order itself.
      return undefined;
    case 'REMOVIDA_PELO_PSP':
      return { status: 'FAILED', channelTradeNo: cob.txid, failureReason: 'removed by the Pix provider' };
    case 'CONCLUIDA': {
      // A CONCLUIDA charge takes no other payment: its Pix is the one received for it.
      const pix = cob.pix?.find((p) => p.txid === undefined || p.txid === cob.txid);
      if (!pix) return undefined; // paid, says the provider, with no Pix to show: asked again later
      const { pagador } = pix;
      const documentNumber = pagador?.cpf ?? pagador?.cnpj;
      const payer =
        pagador?.nome !== undefined || documentNumber !== undefined
          ? {
              ...(pagador?.nome !== undefined && pagador.nome !== '' ? { name: pagador.nome } : {}),
              ...(documentNumber !== undefined ? { documentNumber } : {}),
            }
          : undefined;
      return {
        status: 'SUCCEEDED',
        channelTradeNo: pix.endToEndId,
        paidAmount: pix.valor,
        ...(payer && Object.keys(payer).length > 0 ? { payer } : {}),
      };
    }
  }
}

/**
 * The connector of kind `pix-api` (decisions.md, "The Pix API: a real rail"): Brazil's API Pix,
 * as any receiving bank or PSP offers it. A payment is an immediate charge (`PUT /cob/{txid}`)
 * made before the create answers; its `pixCopiaECola` is the payer's code. The provider's
 * callback is only a hint (`readHint`): what settles a payment is `GET /cob/{txid}`, asked at
 * most once at a time per txid however many callbacks, polls and syncs want it meanwhile.
 * Every answer is checked against the API Pix shapes (@paygate/pix): one that does not fit is
 * ChannelUnavailable, never a wrong state. Receives money only: payouts are never routed here.
 */
export function pixApiConnector(settings: PixApiSettings, context: ConnectorContext): Connector {
  const { name } = settings;
  const client = new PixApiClient(settings, context.now, (operation, outcome) =>
    context.metrics?.channelCall(name, operation, outcome),
  );
  const cobPath = (txid: string) => `/cob/${encodeURIComponent(txid)}`;

  function parse<T>(schema: z.ZodType<T>, operation: string, json: unknown): T {
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new ChannelUnavailable(name, `${operation}: an answer that is not the API Pix's`);
    return parsed.data;
  }

  /** What a refusal said, for the log: the problem's title and detail when it is one. */
  const refusal = (operation: string, status: number, json: unknown) => {
    const problem = Problem.safeParse(json);
    const why = problem.success
      ? `: ${problem.data.title}${problem.data.detail ? ` (${problem.data.detail})` : ''}`
      : '';
    return new ChannelUnavailable(name, `${operation}: answered ${status}${why}`);
  };

  /** The charge as the provider has it, checked to be the one asked for; undefined when it has none. */
  async function fetchCob(txid: string, operation: string): Promise<Cob | undefined> {
    const answer = await client.call(operation, 'GET', cobPath(txid));
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw refusal(operation, answer.status, answer.json);
    const cob = parse(Cob, operation, answer.json);
    if (cob.txid !== txid) throw new ChannelUnavailable(name, `${operation}: answered another charge`);
    return cob;
  }

  /** `GET /cob/{txid}`, one at a time per txid: concurrent askers share the call in flight. */
  const inFlight = new Map<string, Promise<Cob | undefined>>();
  function queryCob(txid: string): Promise<Cob | undefined> {
    let pending = inFlight.get(txid);
    if (!pending) {
      pending = fetchCob(txid, 'queryPayment').finally(() => inFlight.delete(txid));
      inFlight.set(txid, pending);
    }
    return pending;
  }

  /** The txid an order's charge has (kept as its channelTradeNo while open); null: never made. */
  const txidOf = (order: { channelTradeNo: string | null }) =>
    order.channelTradeNo !== null && TxId.safeParse(order.channelTradeNo).success ? order.channelTradeNo : undefined;

  const connector: Connector = {
    kind: 'pix-api',
    name,
    methods: settings.methods,
    payouts: [],

    async createPayment(order) {
      const txid = pixTxid(context.publicUrl, name, order.merchantRef);
      const body: CobPutBody = {
        calendario: { expiracao: Math.max(1, Math.ceil((order.expiresAt - context.now()) / 1000)) },
        valor: { original: order.amount },
        chave: settings.pixKey,
      };
      const answer = await client.call('createPayment', 'PUT', cobPath(txid), body);
      let cob: Cob | undefined;
      if (answer.status === 200 || answer.status === 201) {
        cob = parse(Cob, 'createPayment', answer.json);
      } else if (answer.status === 400 || answer.status === 409) {
        // The txid is taken: a charge made by an earlier create of this order (one that timed
        // out, say). Found again by its txid, it is this order's when its terms are the same.
        cob = await fetchCob(txid, 'createPayment');
        // (Whatever its status: paid or removed since, polling then settles the order as it is.)
        if (!cob || cob.chave !== settings.pixKey || cob.valor.original !== order.amount) {
          throw refusal('createPayment', answer.status, answer.json);
        }
      } else {
        throw refusal('createPayment', answer.status, answer.json);
      }
      if (cob.txid !== txid) throw new ChannelUnavailable(name, 'createPayment: answered another charge');
      if (cob.pixCopiaECola === undefined)
        throw new ChannelUnavailable(name, 'createPayment: the charge has no pixCopiaECola');
      return {
        channelTradeNo: txid,
        payerAction: { kind: 'pix', url: `${context.publicUrl}/cashier/${order.orderNo}`, pixCode: cob.pixCopiaECola },
      };
    },

    async queryPayment(order) {
      const txid = txidOf(order);
      if (txid === undefined) return undefined;
      const cob = await queryCob(txid);
      return cob ? cobState(cob) : undefined;
    },

    async cancelPayment(order): Promise<CancelOutcome> {
      const txid = txidOf(order);
      if (txid === undefined) return { kind: 'canceled' }; // no charge was made: nothing can be paid
      const body: CobPatchBody = { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' };
      const answer = await client.call('cancelPayment', 'PATCH', cobPath(txid), body);
      if (answer.status === 404) return { kind: 'canceled' };
      let cob: Cob | undefined;
      if (answer.status === 200) cob = parse(Cob, 'cancelPayment', answer.json);
      else if (answer.status === 400 || answer.status === 409) {
        // No longer ATIVA: the payer paid first, or it was removed already. What it is decides.
        cob = await queryCob(txid);
        if (cob?.status === 'ATIVA') throw refusal('cancelPayment', answer.status, answer.json);
      } else throw refusal('cancelPayment', answer.status, answer.json);
      if (!cob || cob.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') return { kind: 'canceled' };
      if (cob.status === 'ATIVA') throw new ChannelUnavailable(name, 'cancelPayment: the charge is still ATIVA');
      const state = cobState(cob);
      if (!state) throw new ChannelUnavailable(name, 'cancelPayment: paid, but no Pix in the answer');
      return { kind: 'final', state };
    },

    async createPayout() {
      throw new ChannelUnavailable(name, 'the API Pix receives money only');
    },
    releasePayout: async () => true,
    queryPayout: async () => undefined,

    verifyNotification: () => ({
      ok: false,
      code: 'UNAUTHORIZED',
      reason: 'a pix-api channel is called back at /notifications/pix',
    }),

    readHint(body): HintCheck {
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        return { ok: false, reason: 'the body is not JSON' };
      }
      const parsed = WebhookCallbackBody.safeParse(json);
      if (!parsed.success) return { ok: false, reason: 'not an API Pix callback {"pix": [...]}' };
      const txids = new Set<string>();
      for (const pix of parsed.data.pix) {
        if (pix.txid !== undefined && TxId.safeParse(pix.txid).success) txids.add(pix.txid);
      }
      if (txids.size > MAX_HINTED) return { ok: false, reason: `more than ${MAX_HINTED} charges in one callback` };
      return { ok: true, tradeNos: [...txids] };
    },

    async prepare() {
      // The provider calls `{webhookUrl}/pix`; PUT replaces the key's webhook: the same on every start.
      const webhookUrl = `${context.publicUrl}/channels/${name}/notifications`;
      const answer = await client.call('prepare', 'PUT', `/webhook/${encodeURIComponent(settings.pixKey)}`, {
        webhookUrl,
      });
      if (answer.status < 200 || answer.status > 299) throw refusal('prepare', answer.status, answer.json);
    },

    async receivedBetween(from, to) {
      const receipts: ChannelReceipt[] = [];
      for (let page = 0; page < MAX_PIX_PAGES; page++) {
        const query = new URLSearchParams({
          inicio: new Date(from).toISOString(),
          fim: new Date(to).toISOString(),
          'paginacao.paginaAtual': String(page),
          'paginacao.itensPorPagina': '1000',
        });
        const answer = await client.call('receivedBetween', 'GET', `/pix?${query}`);
        if (answer.status !== 200) throw refusal('receivedBetween', answer.status, answer.json);
        const list = parse(PixList, 'receivedBetween', answer.json);
        for (const pix of list.pix) {
          // Only Pix paid against a charge (with a txid) can be the platform's.
          if (pix.txid === undefined) continue;
          const at = Date.parse(pix.horario);
          if (at < from || at >= to) continue; // `fim` is inclusive at the provider
          receipts.push({ channelTradeNo: pix.endToEndId, chargeId: pix.txid, amount: pix.valor, at });
        }
        if (page + 1 >= list.parametros.paginacao.quantidadeDePaginas) return receipts;
      }
      throw new ChannelUnavailable(name, `receivedBetween: more than ${MAX_PIX_PAGES} pages`);
    },

    close: () => client.close(),
  };
  return connector;
}
