import { randomBytes, randomUUID } from 'node:crypto';
import {
  buildBrCode,
  type Cob,
  type CobPatchBody,
  type CobPutBody,
  type PixList,
  type PixListQuery,
  type Webhook,
  type WebhookPutBody,
} from '@paygate/pix';
import type { CobRecord, NotificationMode, OutboxEntry, PayerRecord, PixRecord } from './model.js';
import { cobInvalid, cobNotFound, webhookInvalid, webhookNotFound } from './problems.js';
import type { Change, Store } from './store.js';

/** A refused test control (plain JSON `{"error"}` on the control port). */
export class ControlError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

export interface ProviderOptions {
  /** The receiving account's Pix key: the only `chave` this provider accepts. */
  readonly pixKey: string;
  readonly merchantName: string;
  readonly merchantCity: string;
  /** Host and port of the payload locations (`{host}/qr/v2/{id}`); set once listening. */
  locationHost: string;
}

const DEFAULT_EXPIRACAO = 86_400;
const iso = (ms: number) => new Date(ms).toISOString();

/** An end-to-end id as the SPI forms one: E, the payer PSP's ISPB, yyyyMMddHHmm, 11 characters. */
function newEndToEndId(now: number): string {
  const stamp = iso(now).replace(/[-T:]/g, '').slice(0, 12);
  const tail = randomBytes(16)
    .toString('base64url')
    .replace(/[^a-zA-Z0-9]/g, '')
    .padEnd(11, '0')
    .slice(0, 11);
  return `E99999999${stamp}${tail}`;
}

/**
 * The provider's behaviour over the store: charges (`cob`), received Pix, the webhook and its
 * callbacks. Each state change and the callbacks it causes are one store transaction, so a
 * restart never finds a paid charge without its pending callback, or the reverse.
 */
export class PixProvider {
  #seq: number;
  #locSeq: number;

  constructor(
    readonly store: Store,
    readonly options: ProviderOptions,
    private readonly clock: () => number = Date.now,
  ) {
    this.#seq = Math.max(0, ...[...store.outbox.values()].map((entry) => entry.seq)) + 1;
    this.#locSeq = Math.max(0, ...[...store.cobs.values()].map((cob) => cob.loc.id)) + 1;
  }

  // ---- views

  /** The charge as `GET /cob/{txid}` answers it (CobCompleta). */
  view(cob: CobRecord): Cob {
    return {
      calendario: { criacao: cob.criacao, expiracao: cob.expiracao },
      txid: cob.txid,
      revisao: cob.revisao,
      loc: { ...cob.loc },
      location: cob.loc.location,
      status: cob.status,
      ...(cob.devedor !== undefined ? { devedor: { ...cob.devedor } } : {}),
      valor: { ...cob.valor },
      chave: cob.chave,
      ...(cob.solicitacaoPagador !== undefined ? { solicitacaoPagador: cob.solicitacaoPagador } : {}),
      ...(cob.infoAdicionais !== undefined ? { infoAdicionais: cob.infoAdicionais.map((i) => ({ ...i })) } : {}),
      pixCopiaECola: cob.pixCopiaECola,
      ...(cob.pix.length > 0 ? { pix: cob.pix.map(pixView) } : {}),
    };
  }

  // ---- charges

  get(txid: string): CobRecord {
    const cob = this.store.cobs.get(txid);
    if (!cob) throw cobNotFound(txid);
    return cob;
  }

  /**
   * `PUT /cob/{txid}`: creates the charge. On an existing txid, the same terms answer the charge
   * as it is (a retried create); other terms revise an ATIVA charge and are refused otherwise
   * (the document's violation "A cobrança já existe, não está no status ATIVA, e a presente
   * requisição busca alterá-la").
   */
  putCob(txid: string, body: CobPutBody): CobRecord {
    this.#checkTerms(body);
    const existing = this.store.cobs.get(txid);
    const terms = termsOf(body);
    if (existing) {
      if (sameTerms(existing, terms)) return existing;
      if (existing.status !== 'ATIVA') {
        throw cobInvalid(`the charge ${txid} exists, is ${existing.status}, and this request would change it`);
      }
      return this.#revise(existing, terms);
    }
    const now = this.clock();
    const locId = this.#locSeq++;
    const location = `${this.options.locationHost}/qr/v2/${randomUUID().replace(/-/g, '')}`;
    const cob: CobRecord = {
      txid,
      revisao: 0,
      status: 'ATIVA',
      criacao: iso(now),
      ...terms,
      loc: { id: locId, location, tipoCob: 'cob', criacao: iso(now) },
      pixCopiaECola: this.#brCode(location),
      pix: [],
    };
    this.store.commit([{ t: 'cob', v: cob }]);
    return cob;
  }

  /** `PATCH /cob/{txid}`: revises an ATIVA charge, or removes it (`REMOVIDA_PELO_USUARIO_RECEBEDOR`). */
  patchCob(txid: string, body: CobPatchBody): CobRecord {
    const cob = this.get(txid);
    if (cob.status !== 'ATIVA') throw cobInvalid(`the charge ${txid} is ${cob.status}, not ATIVA`);
    if (body.status !== undefined) {
      const removed: CobRecord = { ...cob, status: body.status, revisao: cob.revisao + 1 };
      this.store.commit([{ t: 'cob', v: removed }]);
      return removed;
    }
    this.#checkTerms({ chave: body.chave ?? cob.chave, loc: body.loc });
    const terms = withoutUndefined({
      expiracao: body.calendario?.expiracao ?? cob.expiracao,
      valor: { ...cob.valor, ...body.valor },
      chave: body.chave ?? cob.chave,
      devedor: body.devedor ?? cob.devedor,
      solicitacaoPagador: body.solicitacaoPagador ?? cob.solicitacaoPagador,
      infoAdicionais: body.infoAdicionais ?? cob.infoAdicionais,
    }) as CobTerms;
    return sameTerms(cob, terms) ? cob : this.#revise(cob, terms);
  }

  #checkTerms(body: { chave: string; loc?: unknown }): void {
    if (body.chave !== this.options.pixKey) {
      throw cobInvalid('the key does not belong to this receiver', [
        {
          razao: 'O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.',
          propriedade: 'cob.chave',
          valor: body.chave,
        },
      ]);
    }
    if (body.loc !== undefined) {
      throw cobInvalid('this provider has no locations made beforehand', [
        { razao: 'O location referenciado por cob.loc.id inexiste.', propriedade: 'cob.loc.id' },
      ]);
    }
  }

  #revise(cob: CobRecord, terms: CobTerms): CobRecord {
    const { devedor: _d, solicitacaoPagador: _s, infoAdicionais: _i, ...base } = cob;
    const revised: CobRecord = { ...base, ...terms, revisao: cob.revisao + 1 };
    this.store.commit([{ t: 'cob', v: revised }]);
    return revised;
  }

  #brCode(location: string): string {
    return buildBrCode({
      account: { kind: 'url', url: location },
      merchantName: this.options.merchantName,
      merchantCity: this.options.merchantCity,
      oneTime: true,
    });
  }

  /** True once `calendario.criacao + expiracao` has passed (the status stays ATIVA: it is the record's). */
  expired(cob: CobRecord, now = this.clock()): boolean {
    return now >= Date.parse(cob.criacao) + cob.expiracao * 1000;
  }

  // ---- received Pix

  /** `GET /pix?inicio&fim`: the Pix received in [inicio, fim], oldest first, one page. */
  listPix(query: PixListQuery): PixList {
    const from = Date.parse(query.inicio);
    const to = Date.parse(query.fim);
    const all = [...this.store.cobs.values()]
      .flatMap((cob) => cob.pix)
      .filter((pix) => {
        const at = Date.parse(pix.horario);
        return at >= from && at <= to && (query.txid === undefined || pix.txid === query.txid);
      })
      .sort((a, b) => a.horario.localeCompare(b.horario) || a.endToEndId.localeCompare(b.endToEndId));
    const size = query['paginacao.itensPorPagina'];
    const page = query['paginacao.paginaAtual'];
    return {
      parametros: {
        inicio: query.inicio,
        fim: query.fim,
        ...(query.txid !== undefined ? { txid: query.txid } : {}),
        paginacao: {
          paginaAtual: page,
          itensPorPagina: size,
          quantidadeDePaginas: Math.max(1, Math.ceil(all.length / size)),
          quantidadeTotalDeItens: all.length,
        },
      },
      pix: all.slice(page * size, page * size + size).map(pixView),
    };
  }

  // ---- webhook

  putWebhook(chave: string, body: WebhookPutBody): void {
    this.#checkWebhookKey(chave);
    const existing = this.store.webhooks.get(chave);
    if (existing?.webhookUrl === body.webhookUrl) return;
    this.store.commit([
      { t: 'webhook', v: { chave, webhookUrl: body.webhookUrl, criacao: existing?.criacao ?? iso(this.clock()) } },
    ]);
  }

  getWebhook(chave: string): Webhook {
    const webhook = this.store.webhooks.get(chave);
    if (!webhook) throw webhookNotFound(chave);
    return { webhookUrl: webhook.webhookUrl, chave: webhook.chave, criacao: webhook.criacao };
  }

  deleteWebhook(chave: string): void {
    if (!this.store.webhooks.has(chave)) throw webhookNotFound(chave);
    this.store.commit([{ t: 'webhook-deleted', chave }]);
  }

  #checkWebhookKey(chave: string): void {
    if (chave !== this.options.pixKey) {
      throw webhookInvalid('the key does not belong to this receiver', [
        {
          razao: 'O parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário recebedor.',
          propriedade: 'chave',
          valor: chave,
        },
      ]);
    }
  }

  // ---- test controls

  /** A payer pays the charge: it becomes CONCLUIDA with one Pix, and the webhook (if any) is called. */
  pay(txid: string, input: { payer?: PayerRecord; amount?: string }): CobRecord {
    const cob = this.store.cobs.get(txid);
    if (!cob) throw new ControlError(404, `no charge with txid ${txid}`);
    if (cob.status !== 'ATIVA') throw new ControlError(409, `the charge ${txid} is ${cob.status}, not ATIVA`);
    const now = this.clock();
    if (this.expired(cob, now)) throw new ControlError(409, `the charge ${txid} has expired: it takes no payment`);
    const pix: PixRecord = {
      endToEndId: newEndToEndId(now),
      txid,
      valor: input.amount ?? cob.valor.original,
      horario: iso(now),
      chave: cob.chave,
      ...(input.payer !== undefined && Object.keys(input.payer).length > 0 ? { pagador: { ...input.payer } } : {}),
    };
    const paid: CobRecord = { ...cob, status: 'CONCLUIDA', pix: [...cob.pix, pix] };
    this.store.commit([{ t: 'cob', v: paid }, ...this.#callbacks(paid, [pix])]);
    return paid;
  }

  /** The provider removes an ATIVA charge on its own: REMOVIDA_PELO_PSP (no callback: no Pix). */
  removeByPsp(txid: string): CobRecord {
    const cob = this.store.cobs.get(txid);
    if (!cob) throw new ControlError(404, `no charge with txid ${txid}`);
    if (cob.status !== 'ATIVA') throw new ControlError(409, `the charge ${txid} is ${cob.status}, not ATIVA`);
    const removed: CobRecord = { ...cob, status: 'REMOVIDA_PELO_PSP', revisao: cob.revisao + 1 };
    this.store.commit([{ t: 'cob', v: removed }]);
    return removed;
  }

  setMode(mode: NotificationMode): void {
    this.store.commit([{ t: 'mode', v: mode }]);
  }

  revokeTokens(): void {
    this.store.commit([{ t: 'token-epoch', v: this.store.tokenEpoch + 1 }]);
  }

  /** The callback entries a received Pix causes under the current mode: `POST {webhookUrl}/pix`. */
  #callbacks(cob: CobRecord, pix: PixRecord[]): Change[] {
    const webhook = this.store.webhooks.get(cob.chave);
    if (!webhook || this.store.mode === 'drop') return [];
    const url = `${webhook.webhookUrl.replace(/\/$/, '')}/pix`;
    const body = JSON.stringify({ pix: pix.map(pixView) });
    const now = this.clock();
    const id = randomUUID();
    const entry = (copy: number): Change => ({
      t: 'outbox',
      v: {
        key: `${id}.${copy}`,
        url,
        body,
        txid: cob.txid,
        seq: this.#seq++,
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      } satisfies OutboxEntry,
    });
    return this.store.mode === 'duplicate' ? [entry(1), entry(2)] : [entry(1)];
  }
}

function pixView(pix: PixRecord) {
  return {
    endToEndId: pix.endToEndId,
    txid: pix.txid,
    valor: pix.valor,
    chave: pix.chave,
    horario: pix.horario,
    ...(pix.pagador !== undefined ? { pagador: { ...pix.pagador } } : {}),
  };
}

type CobTerms = Pick<CobRecord, 'expiracao' | 'valor' | 'chave' | 'devedor' | 'solicitacaoPagador' | 'infoAdicionais'>;

function termsOf(body: CobPutBody): CobTerms {
  return withoutUndefined({
    expiracao: body.calendario.expiracao ?? DEFAULT_EXPIRACAO,
    valor: { ...body.valor },
    chave: body.chave,
    devedor: body.devedor,
    solicitacaoPagador: body.solicitacaoPagador,
    infoAdicionais: body.infoAdicionais,
  }) as CobTerms;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function sameTerms(cob: CobRecord, terms: CobTerms): boolean {
  const current = {
    expiracao: cob.expiracao,
    valor: cob.valor,
    chave: cob.chave,
    devedor: cob.devedor,
    solicitacaoPagador: cob.solicitacaoPagador,
    infoAdicionais: cob.infoAdicionais,
  };
  const next = { devedor: undefined, solicitacaoPagador: undefined, infoAdicionais: undefined, ...terms };
  return canonical(current) === canonical(next);
}

/** JSON with sorted keys and undefined members left out, for comparing terms. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
