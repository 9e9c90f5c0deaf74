import type { CobStatus, InfoAdicional } from '@paygate/pix';

/** Who paid, as the control endpoint gives it and the `pagador` extension reports it. */
export interface PayerRecord {
  readonly nome?: string;
  readonly cpf?: string;
  readonly cnpj?: string;
}

/** One received Pix (API Pix `Pix`). */
export interface PixRecord {
  readonly endToEndId: string;
  readonly txid: string;
  readonly valor: string;
  /** RFC 3339 (UTC). */
  readonly horario: string;
  readonly chave: string;
  readonly pagador?: PayerRecord;
}

/** One immediate charge (API Pix `cob`), with everything its answers show. */
export interface CobRecord {
  readonly txid: string;
  readonly revisao: number;
  readonly status: CobStatus;
  /** RFC 3339 (UTC). */
  readonly criacao: string;
  /** Seconds from `criacao`. */
  readonly expiracao: number;
  readonly valor: { readonly original: string; readonly modalidadeAlteracao?: 0 | 1 };
  readonly chave: string;
  readonly devedor?: { readonly nome: string; readonly cpf?: string; readonly cnpj?: string };
  readonly solicitacaoPagador?: string;
  readonly infoAdicionais?: readonly InfoAdicional[];
  readonly loc: { readonly id: number; readonly location: string; readonly tipoCob: 'cob'; readonly criacao: string };
  readonly pixCopiaECola: string;
  readonly pix: readonly PixRecord[];
}

export interface WebhookRecord {
  readonly chave: string;
  readonly webhookUrl: string;
  readonly criacao: string;
}

export const NOTIFICATION_MODES = ['normal', 'drop', 'duplicate'] as const;
export type NotificationMode = (typeof NOTIFICATION_MODES)[number];

/** One callback to make: the exact body is fixed when the Pix is received. */
export interface OutboxEntry {
  readonly key: string;
  readonly url: string;
  readonly body: string;
  readonly txid: string;
  /** Delivery order among entries due at the same time. */
  readonly seq: number;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly createdAt: number;
  readonly lastError?: string;
}
