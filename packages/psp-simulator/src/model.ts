/** The simulator's own nouns and status names (a connector maps them to its platform's). */

export const METHODS = ['PIX', 'BOLETO', 'SPEI', 'CARD', 'SEPA'] as const;
export type Method = (typeof METHODS)[number];

/** `canceled`: the platform withdrew the charge (its order was canceled or expired there); no payment is taken after it. */
export type ChargeStatus = 'open' | 'paid' | 'declined' | 'expired' | 'canceled';
export type TransferStatus = 'queued' | 'sent' | 'rejected' | 'canceled' | 'returned';

export interface Payer {
  readonly name?: string;
  readonly documentNumber?: string;
}

export interface BankDetails {
  readonly beneficiary: string;
  readonly bank: string;
  /** CLABE (SPEI) or IBAN (SEPA). */
  readonly account: string;
  readonly bic?: string;
  /** What the payer must quote so the transfer is matched to the charge. */
  readonly reference: string;
}

export interface Charge {
  readonly id: string;
  readonly reference: string;
  readonly status: ChargeStatus;
  readonly amount: string;
  readonly currency: string;
  readonly method: Method;
  readonly notifyUrl: string;
  /** Where the hosted page sends the payer after paying or declining. */
  readonly returnUrl?: string;
  readonly pixCode?: string;
  readonly boletoLine?: string;
  readonly bankDetails?: BankDetails;
  readonly paidAmount?: string;
  readonly payer?: Payer;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly updatedAt: number;
  /** When a final status was reached (unix ms): the settlement day. */
  readonly finalAt?: number;
}

export interface Payee {
  readonly name: string;
  readonly accountNumber: string;
  readonly bankCode?: string;
  readonly documentNumber?: string;
}

export interface Transfer {
  readonly id: string;
  readonly reference: string;
  readonly status: TransferStatus;
  readonly amount: string;
  readonly currency: string;
  readonly payee: Payee;
  readonly notifyUrl: string;
  readonly returnId?: string;
  readonly returnedAt?: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When sent, rejected or canceled (unix ms); a later return has its own day (returnedAt). */
  readonly finalAt?: number;
}

export type NotificationModeName = 'normal' | 'drop' | 'duplicate' | 'reverse';

/** The notification mode; while `reverse`, new notifications are held in the outbox. */
export interface NotificationMode {
  readonly mode: NotificationModeName;
}

/** One delivery to make: the exact body bytes are fixed when the notification is created. */
export interface OutboxEntry {
  /** Unique per delivery (a duplicated notification is two entries with one event id). */
  readonly key: string;
  readonly eventId: string;
  readonly url: string;
  readonly body: string;
  /** Held by `reverse` mode until the mode changes. */
  readonly held: boolean;
  /** Order among entries due at the same time (smaller first). */
  readonly seq: number;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly createdAt: number;
  readonly lastError?: string;
}
