import { PROBLEM_TYPE_BASE, type Problem, type Violacao } from '@paygate/pix';

/**
 * An API Pix error answer (RFC 7807, `application/problem+json`), as the document's "Tratamento de
 * erros" section lists them: the `type` is `https://pix.bcb.gov.br/api/v2/error/<TipoErro>`.
 */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    readonly title: string,
    detail: string,
    readonly violacoes?: readonly Violacao[],
    /** Extra answer headers (WWW-Authenticate on 401). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }

  toJSON(): Problem {
    return {
      type: `${PROBLEM_TYPE_BASE}${this.kind}`,
      title: this.title,
      status: this.status,
      detail: this.message,
      ...(this.violacoes !== undefined && this.violacoes.length > 0 ? { violacoes: [...this.violacoes] } : {}),
    };
  }
}

export const invalidRequest = (detail: string, violacoes?: Violacao[]) =>
  new ApiProblem(400, 'RequisicaoInvalida', 'Requisição inválida.', detail, violacoes);
export const cobInvalid = (detail: string, violacoes?: Violacao[]) =>
  new ApiProblem(400, 'CobOperacaoInvalida', 'Cobrança inválida.', detail, violacoes);
export const cobNotFound = (txid: string) =>
  new ApiProblem(404, 'CobNaoEncontrado', 'Cobrança não encontrada.', `no charge with txid ${txid}`);
export const cobQueryInvalid = (detail: string) =>
  new ApiProblem(400, 'CobConsultaInvalida', 'Consulta inválida.', detail);
export const pixQueryInvalid = (detail: string, violacoes?: Violacao[]) =>
  new ApiProblem(400, 'PixConsultaInvalida', 'Consulta inválida.', detail, violacoes);
export const webhookInvalid = (detail: string, violacoes?: Violacao[]) =>
  new ApiProblem(400, 'WebhookOperacaoInvalida', 'Webhook inválido.', detail, violacoes);
export const webhookNotFound = (chave: string) =>
  new ApiProblem(404, 'WebhookNaoEncontrado', 'Webhook não encontrado.', `no webhook for key ${chave}`);
export const notFound = () => new ApiProblem(404, 'NaoEncontrado', 'Não Encontrado', 'Entidade não encontrada.');
export const accessDenied = (detail: string) =>
  new ApiProblem(403, 'AcessoNegado', 'Acesso Negado', detail, undefined, {
    'www-authenticate': 'Bearer error="insufficient_scope"',
  });
/** No usable access token (missing, malformed, expired or revoked): RFC 6750 §3.1 `invalid_token`. */
export const unauthorized = (detail: string) =>
  new ApiProblem(401, 'AcessoNegado', 'Não autorizado', detail, undefined, {
    'www-authenticate': 'Bearer error="invalid_token"',
  });
export const unavailable = () =>
  new ApiProblem(
    503,
    'ServicoIndisponivel',
    'Serviço Indisponível',
    'Serviço não está disponível no momento (the simulator was told to be down).',
  );
