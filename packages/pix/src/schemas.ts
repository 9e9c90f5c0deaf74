/**
 * The API Pix shapes a platform and a receiving provider (PSP recebedor) exchange, as zod schemas.
 *
 * Source: the Banco Central do Brasil's *API Pix*, `openapi.yaml` version 2.x (read at 2.9.0).
 * Each schema names the component or path of that document it mirrors ("§ components.schemas.X",
 * "§ paths./cob/{txid}.put"). Written from the document's facts, not copied from it.
 *
 * Two policies, on purpose:
 * - **Request bodies are strict** (`z.strictObject`): a provider refuses what it does not know, so
 *   a body that passes here is one the API accepts, and a typo in a member name is an error.
 * - **Answers are loose** (`z.looseObject`): the document's "Evolução da API Pix" section counts
 *   new members in answers and new enum values as compatible changes that clients must survive,
 *   so unknown members are kept, never refused. What a consumer reads is still checked.
 *
 * @module
 */
import { z } from 'zod';

// ---------------------------------------------------------------- patterns

/**
 * A charge's transaction id as the receiver creates it for `PUT /cob/{txid}`: 26 to 35 letters or
 * digits. § components.schemas.TxId (`[a-zA-Z0-9]{26,35}`); unique per receiver's CPF/CNPJ.
 */
export const TxId = z.string().regex(/^[a-zA-Z0-9]{26,35}$/, '26 to 35 letters or digits (API Pix TxId)');
export type TxId = z.output<typeof TxId>;

/**
 * The `txid` a received Pix carries: 1 to 35 letters or digits (a static QR code's may be short).
 * § components.schemas.Pix.properties.txid (TxId narrowed to `[a-zA-Z0-9]{1,35}`).
 */
export const PixTxId = z.string().regex(/^[a-zA-Z0-9]{1,35}$/, '1 to 35 letters or digits');
export type PixTxId = z.output<typeof PixTxId>;

/**
 * The Pix's end-to-end id (EndToEndIdentification of the pacs.008): 32 letters or digits.
 * § components.schemas.EndToEndId.
 */
export const EndToEndId = z.string().regex(/^[a-zA-Z0-9]{32}$/, '32 letters or digits (API Pix EndToEndId)');
export type EndToEndId = z.output<typeof EndToEndId>;

/**
 * A money amount in reais as the API writes it: up to 10 integer digits, a dot, exactly 2 decimals
 * (`"37.00"`). § components.schemas.CobValor.properties.original and Pix.properties.valor
 * (`\d{1,10}\.\d{2}`).
 */
export const Valor = z.string().regex(/^\d{1,10}\.\d{2}$/, 'a decimal with two places such as "10.50" (API Pix valor)');
export type Valor = z.output<typeof Valor>;

/** True when a {@link Valor} is more than zero. */
export const isPositiveValor = (valor: string): boolean => /[1-9]/.test(valor);

/**
 * A timestamp "respecting RFC 3339" (`format: date-time`): `Z` or a numeric offset, optional
 * fractions. § components.schemas.CobCriacao.criacao, Pix.horario, Inicio, Fim.
 */
export const DateTime = z.iso.datetime({ offset: true });
export type DateTime = z.output<typeof DateTime>;

/** § components.schemas.PessoaFisica.cpf: 11 digits, kept as a string (leading zeros). */
export const Cpf = z.string().regex(/^\d{11}$/, '11 digits (CPF)');
/** § components.schemas.PessoaJuridica.cnpj: 14 digits or capital letters (the alphanumeric CNPJ). */
export const Cnpj = z.string().regex(/^[0-9A-Z]{14}$/, '14 digits or capital letters (CNPJ)');

/**
 * The receiver's Pix key registered in the DICT (phone, e-mail, CPF/CNPJ or random EVP), at most 77
 * characters. § components.schemas.CobBase.properties.chave, and the `{chave}` of `/webhook/{chave}`.
 */
export const Chave = z.string().min(1).max(77);
export type Chave = z.output<typeof Chave>;

// ---------------------------------------------------------------- people

/**
 * The debtor the charge is addressed to (not necessarily who pays): a person (`cpf` + `nome`) or a
 * company (`cnpj` + `nome`), never both documents. § components.schemas.CobSolicitada.devedor
 * (oneOf PessoaFisica / PessoaJuridica; `nome` at most 200).
 */
export const Devedor = z.union([
  z.strictObject({ cpf: Cpf, nome: z.string().min(1).max(200) }),
  z.strictObject({ cnpj: Cnpj, nome: z.string().min(1).max(200) }),
]);
export type Devedor = z.output<typeof Devedor>;

/**
 * Who paid, as many providers add it to each received Pix: `nome` and the document (`cpf` or
 * `cnpj`). **Not in the official document** (its `Pix` has no payer); a common extension that
 * Paygate maps to the payment's payer. All members optional; both documents at once is refused.
 */
export const Pagador = z
  .looseObject({
    nome: z.string().max(200).optional(),
    cpf: Cpf.optional(),
    cnpj: Cnpj.optional(),
  })
  .refine((p) => p.cpf === undefined || p.cnpj === undefined, 'a payer has a cpf or a cnpj, not both');
export type Pagador = z.output<typeof Pagador>;

// ---------------------------------------------------------------- charges (cob)

/**
 * Registration status of an immediate charge. § components.schemas.CobrancaStatus:
 * `ATIVA` created, neither paid nor removed; `CONCLUIDA` paid (takes no other payment);
 * `REMOVIDA_PELO_USUARIO_RECEBEDOR` removed by the receiver; `REMOVIDA_PELO_PSP` removed by the PSP.
 */
export const COB_STATUSES = ['ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP'] as const;
export const CobStatus = z.enum(COB_STATUSES);
export type CobStatus = z.output<typeof CobStatus>;

/**
 * One additional information shown to the payer. § components.schemas.CobBase.infoAdicionais
 * (items `nome` at most 50, `valor` at most 200; at most 50 items).
 */
export const InfoAdicional = z.strictObject({ nome: z.string().min(1).max(50), valor: z.string().max(200) });
export type InfoAdicional = z.output<typeof InfoAdicional>;

const expiracao = z
  .int()
  .positive('calendario.expiracao must be more than zero seconds')
  .max(2_147_483_647)
  .meta({ description: 'Lifetime in seconds from calendario.criacao (API default 86400)' });

/**
 * The body of `PUT /cob/{txid}` (create an immediate charge; also `POST /cob`).
 * § components.schemas.CobSolicitada via requestBodies.CobBody: required `calendario`, `valor`
 * (with `original`), `chave`; optional `devedor`, `loc` (`{id}` of a location made beforehand),
 * `solicitacaoPagador` (at most 140), `infoAdicionais`. The document's violations list
 * (Tag Cob, `CobOperacaoInvalida`) refuses `expiracao` ≤ 0 and `valor.original` zero.
 * `valor.retirada` (Pix Saque/Troco) is not accepted here.
 */
export const CobPutBody = z.strictObject({
  calendario: z.strictObject({ expiracao: expiracao.optional() }),
  devedor: Devedor.optional(),
  loc: z.strictObject({ id: z.int().nonnegative() }).optional(),
  valor: z.strictObject({
    original: Valor.refine(isPositiveValor, 'valor.original must be more than zero'),
    /** 1: the payer may change the amount. § CobValor.modalidadeAlteracao. */
    modalidadeAlteracao: z.union([z.literal(0), z.literal(1)]).optional(),
  }),
  chave: Chave,
  solicitacaoPagador: z.string().max(140).optional(),
  infoAdicionais: z.array(InfoAdicional).max(50).optional(),
});
export type CobPutBody = z.output<typeof CobPutBody>;

/**
 * The body of `PATCH /cob/{txid}` (revise an ATIVA charge). § components.schemas.CobRevisada via
 * requestBodies.CobBodyRevisada: every member optional; `status` may only be
 * `REMOVIDA_PELO_USUARIO_RECEBEDOR`, and (violations list) never together with other changes.
 */
export const CobPatchBody = CobPutBody.extend({
  calendario: z.strictObject({ expiracao: expiracao.optional() }).optional(),
  valor: CobPutBody.shape.valor.partial().optional(),
  chave: Chave.optional(),
  status: z.literal('REMOVIDA_PELO_USUARIO_RECEBEDOR').optional(),
}).refine(
  (body) => body.status === undefined || Object.keys(body).length === 1,
  'status REMOVIDA_PELO_USUARIO_RECEBEDOR cannot be combined with other changes',
);
export type CobPatchBody = z.output<typeof CobPatchBody>;

/**
 * A refund of a received Pix. § components.schemas.Devolucao: `id`, `rtrId` (32), `valor`,
 * `horario.{solicitacao,liquidacao}`, `status` EM_PROCESSAMENTO | DEVOLVIDO | NAO_REALIZADO.
 */
export const Devolucao = z.looseObject({
  id: z.string().regex(/^[a-zA-Z0-9]{1,35}$/),
  rtrId: z.string().regex(/^[a-zA-Z0-9]{32}$/),
  valor: Valor,
  natureza: z.string().optional(),
  descricao: z.string().max(140).optional(),
  horario: z.looseObject({ solicitacao: DateTime.optional(), liquidacao: DateTime.optional() }),
  status: z.string(),
  motivo: z.string().max(140).optional(),
});
export type Devolucao = z.output<typeof Devolucao>;

/**
 * One received Pix. § components.schemas.Pix: required `endToEndId`, `valor`, `horario` (when the
 * PSP processed it); optional `txid` (1–35), `componentesValor`, `chave`, `infoPagador` (at most
 * 140), `devolucoes`; plus the {@link Pagador} extension.
 */
export const Pix = z.looseObject({
  endToEndId: EndToEndId,
  txid: PixTxId.optional(),
  valor: Valor,
  componentesValor: z.looseObject({}).optional(),
  chave: Chave.optional(),
  horario: DateTime,
  infoPagador: z.string().max(140).optional(),
  devolucoes: z.array(Devolucao).optional(),
  pagador: Pagador.optional(),
});
export type Pix = z.output<typeof Pix>;

/**
 * A location of a dynamic QR code's payload, as a charge answer carries it.
 * § components.schemas.PayloadLocation (`id`, `location`, `tipoCob` cob|cobv, `criacao`); the
 * document's own examples omit `tipoCob` and `criacao`, so only `id` is required here.
 */
export const Loc = z.looseObject({
  id: z.int().nonnegative(),
  location: z.string().max(77).optional(),
  tipoCob: z.string().optional(),
  criacao: DateTime.optional(),
});
export type Loc = z.output<typeof Loc>;

/**
 * An immediate charge as the API answers it: `PUT`/`PATCH /cob/{txid}` (201/200, CobGerada) and
 * `GET /cob/{txid}` (200, CobCompleta). § components.schemas.CobGerada + CobCompleta: required
 * `calendario.{criacao,expiracao}`, `txid`, `revisao` (from 0, +1 per change), `status`, `valor`,
 * `chave`; `loc`, `location` (the payload URL without scheme), `devedor`, `solicitacaoPagador`,
 * `infoAdicionais`, `pixCopiaECola` (the BR Code, at most 512), and `pix[]` once paid (each with
 * the charge's 26–35 `txid`).
 */
export const Cob = z.looseObject({
  calendario: z.looseObject({ criacao: DateTime, expiracao: z.int().positive() }),
  txid: TxId,
  revisao: z.int().nonnegative(),
  loc: Loc.optional(),
  location: z.string().max(77).optional(),
  status: CobStatus,
  devedor: z.looseObject({ nome: z.string().optional(), cpf: Cpf.optional(), cnpj: Cnpj.optional() }).optional(),
  valor: z.looseObject({ original: Valor, modalidadeAlteracao: z.int().min(0).max(1).optional() }),
  chave: Chave,
  solicitacaoPagador: z.string().max(140).optional(),
  infoAdicionais: z.array(z.looseObject({ nome: z.string(), valor: z.string() })).optional(),
  pixCopiaECola: z.string().max(512).optional(),
  pix: z.array(Pix.extend({ txid: TxId.optional() })).optional(),
});
export type Cob = z.output<typeof Cob>;

// ---------------------------------------------------------------- received Pix (GET /pix)

/** § components.schemas.Paginacao (all four required). */
export const Paginacao = z.looseObject({
  paginaAtual: z.int().nonnegative(),
  itensPorPagina: z.int().positive(),
  quantidadeDePaginas: z.int().nonnegative(),
  quantidadeTotalDeItens: z.int().nonnegative(),
});
export type Paginacao = z.output<typeof Paginacao>;

/**
 * The query of `GET /pix` (received Pix): required `inicio` and `fim` (RFC 3339; `fim` not before
 * `inicio`), optional `txid`, and `paginacao.paginaAtual` (from 0, default 0) and
 * `paginacao.itensPorPagina` (1–1000, default 100). § paths./pix.get.parameters.
 * Parse it from `Object.fromEntries(url.searchParams)`.
 */
export const PixListQuery = z
  .strictObject({
    inicio: DateTime,
    fim: DateTime,
    txid: PixTxId.optional(),
    'paginacao.paginaAtual': z.coerce.number().int().nonnegative().default(0),
    'paginacao.itensPorPagina': z.coerce.number().int().min(1).max(1000).default(100),
  })
  .refine((q) => Date.parse(q.fim) >= Date.parse(q.inicio), 'fim is before inicio');
export type PixListQuery = z.output<typeof PixListQuery>;

/**
 * The answer of `GET /pix?inicio&fim`. § components.schemas.PixConsultados: `parametros`
 * (ParametrosConsultaPix: `inicio`, `fim`, `paginacao`, and the filters given) and `pix[]`
 * (absent read as empty).
 */
export const PixList = z.looseObject({
  parametros: z.looseObject({ inicio: DateTime, fim: DateTime, paginacao: Paginacao }),
  pix: z.array(Pix).default([]),
});
export type PixList = z.output<typeof PixList>;

// ---------------------------------------------------------------- webhook

/**
 * The body of `PUT /webhook/{chave}`. § components.schemas.WebhookSolicitado: `webhookUrl`
 * (`format: uri`). The provider then calls `POST {webhookUrl}/pix` (see {@link WebhookCallbackBody}).
 * http is allowed as well as https: a deployment may terminate the callback's mTLS at its edge.
 */
export const WebhookPutBody = z.strictObject({
  webhookUrl: z
    .string()
    .max(2048)
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'an http(s) URL'),
});
export type WebhookPutBody = z.output<typeof WebhookPutBody>;

/**
 * The answer of `GET /webhook/{chave}`. § components.schemas.WebhookCompleto (`webhookUrl`,
 * `criacao`; the schema lists `cnpj`, the document's example `chave`: both optional here).
 */
export const Webhook = z.looseObject({
  webhookUrl: z.string(),
  chave: Chave.optional(),
  cnpj: Cnpj.optional(),
  criacao: DateTime,
});
export type Webhook = z.output<typeof Webhook>;

/**
 * The body the provider POSTs to `{webhookUrl}/pix` when Pix with a txid are received.
 * § paths./webhook/{chave}.put.callbacks.listaPix and requestBodies.WebhookPixBody: `{"pix": [Pix]}`
 * (several Pix of one key may be grouped). A hint only: it carries no signature.
 */
export const WebhookCallbackBody = z.looseObject({ pix: z.array(Pix) });
export type WebhookCallbackBody = z.output<typeof WebhookCallbackBody>;

// ---------------------------------------------------------------- errors

/** The prefix of every API Pix error `type` ("Tratamento de erros": `…/error/<TipoErro>`). */
export const PROBLEM_TYPE_BASE = 'https://pix.bcb.gov.br/api/v2/error/';

/**
 * One violated rule of a refused request. § components.schemas.Violacao (`razao`, `propriedade`
 * such as `cob.valor.original`, `valor`).
 */
export const Violacao = z.looseObject({
  razao: z.string().optional(),
  propriedade: z.string().optional(),
  valor: z.string().optional(),
});
export type Violacao = z.output<typeof Violacao>;

/**
 * An error answer, RFC 7807 (`application/problem+json`). § components.schemas.Problema: required
 * `type` (`https://pix.bcb.gov.br/api/v2/error/<TipoErro>`, e.g. `CobOperacaoInvalida`,
 * `CobNaoEncontrado`, `AcessoNegado`, `ServicoIndisponivel`), `title`, `status`; optional `detail`,
 * `correlationId`, `violacoes`.
 */
export const Problem = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.int().min(400).max(599),
  detail: z.string().optional(),
  correlationId: z.string().optional(),
  violacoes: z.array(Violacao).optional(),
});
export type Problem = z.output<typeof Problem>;

// ---------------------------------------------------------------- OAuth 2.0

/**
 * The scopes a receiving platform asks for. § components.securitySchemes.OAuth2 (clientCredentials
 * flow): `cob.write`, `cob.read`, `pix.read`, `webhook.write`, `webhook.read` (of the document's
 * longer list).
 */
export const PIX_SCOPES = ['cob.write', 'cob.read', 'pix.read', 'webhook.write', 'webhook.read'] as const;
export type PixScope = (typeof PIX_SCOPES)[number];

/**
 * The token endpoint's answer to a client-credentials grant. RFC 6749 §4.4.3 / §5.1 (the API Pix
 * names only the flow: § components.securitySchemes.OAuth2): `access_token`, `token_type`
 * (`Bearer`, any case), `expires_in` seconds (recommended by the RFC, so optional), `scope`
 * (space-separated) when it differs from the request.
 */
export const TokenAnswer = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i, 'a Bearer token'),
  expires_in: z.int().positive().optional(),
  scope: z.string().optional(),
});
export type TokenAnswer = z.output<typeof TokenAnswer>;

/**
 * The form body of `POST tokenUrl` (RFC 6749 §4.4.2), parsed from
 * `Object.fromEntries(new URLSearchParams(body))`: `grant_type=client_credentials` and an optional
 * space-separated `scope`.
 */
export const TokenRequest = z.strictObject({
  grant_type: z.literal('client_credentials'),
  scope: z.string().max(1024).optional(),
});
export type TokenRequest = z.output<typeof TokenRequest>;
