import { randomBytes } from 'node:crypto';
import { payerInstructions } from './instructions.js';
import type {
  Charge,
  Method,
  NotificationModeName,
  OutboxEntry,
  Payee,
  Payer,
  Transfer,
  TransferStatus,
} from './model.js';
import type { Change, Store } from './store.js';

/** A refusal with the HTTP status it maps to and a reason for the caller. */
export class ProviderError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

export interface ProviderOptions {
  /** Where the hosted payer pages are reached (`payUrl` = `${publicUrl}/pay/{id}`). */
  publicUrl: string;
  /** Charges expire this long after creation unless the caller gives `expiresAt`. */
  readonly chargeTtlMs: number;
  /** Queued transfers are sent automatically after this long; 0: only by the control endpoint. */
  readonly autoCompleteMs: number;
  /** Our fee on paid charges and sent transfers, in basis points (settlement file only). */
  readonly feeBps: number;
}

export interface CreateCharge {
  readonly reference: string;
  readonly amount: string;
  readonly currency: string;
  readonly method: Method;
  readonly notifyUrl: string;
  readonly expiresAt?: number;
  readonly returnUrl?: string;
}

export interface CreateTransfer {
  readonly reference: string;
  readonly amount: string;
  readonly currency: string;
  readonly payee: Payee;
  readonly notifyUrl: string;
}

/**
 * The provider's behaviour: charges, transfers, their notifications, the notification mode and
 * the settlement file. Every state change and the notifications it causes are one store
 * transaction, so a restart never finds one without the other.
 */
export class Provider {
  #seq: number;

  constructor(
    readonly store: Store,
    readonly options: ProviderOptions,
    private readonly clock: () => number = Date.now,
  ) {
    let last = 0;
    for (const entry of store.outbox.values()) last = Math.max(last, entry.seq);
    this.#seq = last + 1;
  }

  // ---- views (what GET answers and notifications carry)

  chargeView(charge: Charge) {
    return {
      id: charge.id,
      reference: charge.reference,
      status: charge.status,
      amount: charge.amount,
      currency: charge.currency,
      method: charge.method,
      payUrl: `${this.options.publicUrl}/pay/${charge.id}`,
      ...(charge.pixCode !== undefined ? { pixCode: charge.pixCode } : {}),
      ...(charge.boletoLine !== undefined ? { boletoLine: charge.boletoLine } : {}),
      ...(charge.bankDetails !== undefined ? { bankDetails: charge.bankDetails } : {}),
      ...(charge.paidAmount !== undefined ? { paidAmount: charge.paidAmount } : {}),
      ...(charge.payer !== undefined ? { payer: charge.payer } : {}),
      expiresAt: charge.expiresAt,
      createdAt: charge.createdAt,
      updatedAt: charge.updatedAt,
    };
  }

  transferView(transfer: Transfer) {
    return {
      id: transfer.id,
      reference: transfer.reference,
      status: transfer.status,
      amount: transfer.amount,
      currency: transfer.currency,
      payee: transfer.payee,
      ...(transfer.returnId !== undefined ? { returnId: transfer.returnId } : {}),
      ...(transfer.returnedAt !== undefined ? { returnedAt: transfer.returnedAt } : {}),
      createdAt: transfer.createdAt,
      updatedAt: transfer.updatedAt,
    };
  }

  // ---- charges

  createCharge(input: CreateCharge): { charge: Charge; created: boolean } {
    const existing = this.chargeByReference(input.reference);
    if (existing) {
      if (
        existing.amount !== input.amount ||
        existing.currency !== input.currency ||
        existing.method !== input.method
      ) {
        throw new ProviderError(409, `reference ${input.reference} is already a charge with other terms`);
      }
      return { charge: existing, created: false };
    }
    const now = this.clock();
    const id = newId('ch');
    const charge: Charge = {
      id,
      reference: input.reference,
      status: 'open',
      amount: input.amount,
      currency: input.currency,
      method: input.method,
      notifyUrl: input.notifyUrl,
      ...(input.returnUrl !== undefined ? { returnUrl: input.returnUrl } : {}),
      ...payerInstructions(id, input.method, input.amount),
      createdAt: now,
      expiresAt: input.expiresAt ?? now + this.options.chargeTtlMs,
      updatedAt: now,
    };
    this.store.commit([{ t: 'charge', v: charge }]);
    return { charge, created: true };
  }

  getCharge(id: string): Charge {
    const charge = this.store.charges.get(id);
    if (!charge) throw new ProviderError(404, `no charge ${id}`);
    return charge;
  }

  chargeByReference(reference: string): Charge | undefined {
    const id = this.store.chargesByReference.get(reference);
    return id === undefined ? undefined : this.store.charges.get(id);
  }

  /** The payer paid (hosted page or control endpoint) or the payment failed. */
  settleCharge(charge: Charge, outcome: { paid: true; paidAmount?: string; payer?: Payer } | { paid: false }): Charge {
    if (charge.status !== 'open') throw new ProviderError(409, `charge ${charge.id} is ${charge.status}, not open`);
    const now = this.clock();
    if (now >= charge.expiresAt) {
      this.#expire(charge, now);
      throw new ProviderError(409, `charge ${charge.id} has expired`);
    }
    const settled: Charge = outcome.paid
      ? {
          ...charge,
          status: 'paid',
          paidAmount: outcome.paidAmount ?? charge.amount,
          ...(outcome.payer !== undefined ? { payer: outcome.payer } : {}),
          updatedAt: now,
          finalAt: now,
        }
      : { ...charge, status: 'declined', updatedAt: now, finalAt: now };
    this.store.commit([
      { t: 'charge', v: settled },
      ...this.#notify('charge.updated', this.chargeView(settled), settled.notifyUrl),
    ]);
    return settled;
  }

  /**
   * The platform withdraws a charge it no longer accepts (its order was canceled or expired):
   * an open charge becomes `canceled` (and is notified like any change); one already canceled or
   * expired is answered as it is, so a retried cancel is harmless. A charge the payer already
   * paid or declined cannot be withdrawn: 409, and the platform learns its state by a GET.
   */
  cancelCharge(charge: Charge): Charge {
    if (charge.status === 'canceled' || charge.status === 'expired') return charge;
    if (charge.status !== 'open') throw new ProviderError(409, `charge ${charge.id} is ${charge.status}, not open`);
    const now = this.clock();
    const canceled: Charge = { ...charge, status: 'canceled', updatedAt: now, finalAt: now };
    this.store.commit([
      { t: 'charge', v: canceled },
      ...this.#notify('charge.updated', this.chargeView(canceled), canceled.notifyUrl),
    ]);
    return canceled;
  }

  #expire(charge: Charge, now: number): void {
    const expired: Charge = { ...charge, status: 'expired', updatedAt: now, finalAt: now };
    this.store.commit([
      { t: 'charge', v: expired },
      ...this.#notify('charge.updated', this.chargeView(expired), expired.notifyUrl),
    ]);
  }

  // ---- transfers

  createTransfer(input: CreateTransfer): { transfer: Transfer; created: boolean } {
    const existing = this.transferByReference(input.reference);
    if (existing) {
      if (existing.amount !== input.amount || existing.currency !== input.currency) {
        throw new ProviderError(409, `reference ${input.reference} is already a transfer with other terms`);
      }
      return { transfer: existing, created: false };
    }
    const now = this.clock();
    const transfer: Transfer = {
      id: newId('tr'),
      reference: input.reference,
      status: 'queued',
      amount: input.amount,
      currency: input.currency,
      payee: input.payee,
      notifyUrl: input.notifyUrl,
      createdAt: now,
      updatedAt: now,
    };
    this.store.commit([{ t: 'transfer', v: transfer }]);
    return { transfer, created: true };
  }

  getTransfer(id: string): Transfer {
    const transfer = this.store.transfers.get(id);
    if (!transfer) throw new ProviderError(404, `no transfer ${id}`);
    return transfer;
  }

  transferByReference(reference: string): Transfer | undefined {
    const id = this.store.transfersByReference.get(reference);
    return id === undefined ? undefined : this.store.transfers.get(id);
  }

  /** The platform's release: only a transfer still queued can be canceled. Notifies like any other change. */
  cancelTransfer(transfer: Transfer): Transfer {
    return this.#finishTransfer(transfer, 'canceled');
  }

  /** The bank sent (or rejected) a queued transfer. */
  completeTransfer(transfer: Transfer, sent: boolean): Transfer {
    return this.#finishTransfer(transfer, sent ? 'sent' : 'rejected');
  }

  #finishTransfer(transfer: Transfer, status: TransferStatus): Transfer {
    if (transfer.status !== 'queued') {
      throw new ProviderError(409, `transfer ${transfer.id} is ${transfer.status}, not queued`);
    }
    const now = this.clock();
    const finished: Transfer = { ...transfer, status, updatedAt: now, finalAt: now };
    this.store.commit([
      { t: 'transfer', v: finished },
      ...this.#notify('transfer.updated', this.transferView(finished), finished.notifyUrl),
    ]);
    return finished;
  }

  /** The payee's bank sent the money back. */
  returnTransfer(transfer: Transfer): Transfer {
    if (transfer.status !== 'sent')
      throw new ProviderError(409, `transfer ${transfer.id} is ${transfer.status}, not sent`);
    const now = this.clock();
    const returned: Transfer = {
      ...transfer,
      status: 'returned',
      returnId: newId('rt'),
      returnedAt: now,
      updatedAt: now,
    };
    this.store.commit([
      { t: 'transfer', v: returned },
      ...this.#notify('transfer.updated', this.transferView(returned), returned.notifyUrl),
    ]);
    return returned;
  }

  // ---- notifications

  /** Sets the notification mode; leaving `reverse` releases the held notifications, newest first. */
  setMode(mode: NotificationModeName): { released: number } {
    const previous = this.store.mode.mode;
    const changes: Change[] = [{ t: 'mode', v: { mode } }];
    let released = 0;
    if (previous === 'reverse' && mode !== 'reverse') {
      const now = this.clock();
      const held = [...this.store.outbox.values()].filter((entry) => entry.held).sort((a, b) => b.seq - a.seq);
      for (const entry of held) {
        changes.push({ t: 'outbox', v: { ...entry, held: false, seq: this.#seq++, nextAttemptAt: now } });
      }
      released = held.length;
    }
    this.store.commit(changes);
    return { released };
  }

  /** The outbox entries a state change causes under the current mode. */
  #notify(type: 'charge.updated' | 'transfer.updated', object: object, url: string): Change[] {
    const mode = this.store.mode.mode;
    if (mode === 'drop') return [];
    const eventId = newId('evt');
    const body = JSON.stringify({ id: eventId, type, object });
    const now = this.clock();
    const entry = (copy: number): Change => ({
      t: 'outbox',
      v: {
        key: `${eventId}.${copy}`,
        eventId,
        url,
        body,
        held: mode === 'reverse',
        seq: this.#seq++,
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
      } satisfies OutboxEntry,
    });
    return mode === 'duplicate' ? [entry(1), entry(2)] : [entry(1)];
  }

  // ---- time passing

  /** Expires open charges past their expiry and sends queued transfers when auto-complete is on. */
  tick(): void {
    const now = this.clock();
    for (const charge of this.store.charges.values()) {
      if (charge.status === 'open' && now >= charge.expiresAt) this.#expire(charge, now);
    }
    if (this.options.autoCompleteMs > 0) {
      for (const transfer of this.store.transfers.values()) {
        if (transfer.status === 'queued' && now - transfer.createdAt >= this.options.autoCompleteMs) {
          this.completeTransfer(transfer, true);
        }
      }
    }
  }

  // ---- settlement

  /** The day's settlement file (UTC day `date`, YYYY-MM-DD): one line per final state reached that day. */
  settlement(date: string): string {
    const from = Date.parse(`${date}T00:00:00.000Z`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(from)) throw new ProviderError(400, `not a date: ${date}`);
    const to = from + 86_400_000;
    const inDay = (time: number | undefined): time is number => time !== undefined && time >= from && time < to;
    const rows: { at: number; cells: string[] }[] = [];
    for (const c of this.store.charges.values()) {
      if (!inDay(c.finalAt)) continue;
      const fee = c.status === 'paid' ? this.#fee(c.paidAmount ?? c.amount) : zero(c.amount);
      rows.push({
        at: c.finalAt,
        cells: ['charge', c.id, c.reference, c.status, c.currency, c.amount, c.paidAmount ?? '', fee, iso(c.finalAt)],
      });
    }
    for (const t of this.store.transfers.values()) {
      if (inDay(t.finalAt)) {
        // A transfer returned later was sent on its own day: that day's line says so.
        const status = t.status === 'returned' ? 'sent' : t.status;
        const fee = status === 'sent' ? this.#fee(t.amount) : zero(t.amount);
        rows.push({
          at: t.finalAt,
          cells: ['transfer', t.id, t.reference, status, t.currency, t.amount, '', fee, iso(t.finalAt)],
        });
      }
      if (inDay(t.returnedAt) && t.returnId !== undefined) {
        rows.push({
          at: t.returnedAt,
          cells: [
            'return',
            t.returnId,
            t.reference,
            'returned',
            t.currency,
            t.amount,
            '',
            zero(t.amount),
            iso(t.returnedAt),
          ],
        });
      }
    }
    rows.sort((a, b) => a.at - b.at || (a.cells[1] ?? '').localeCompare(b.cells[1] ?? ''));
    return [SETTLEMENT_HEADER, ...rows.map((row) => row.cells.map(csvCell).join(','))].join('\n') + '\n';
  }

  #fee(amount: string): string {
    const scale = amount.split('.')[1]?.length ?? 0;
    const minor = BigInt(amount.replace('.', ''));
    // Rounded half up to the amount's own precision.
    const fee = (minor * BigInt(this.options.feeBps) + 5_000n) / 10_000n;
    return formatMinor(fee, scale);
  }
}

export const SETTLEMENT_HEADER = 'type,id,reference,status,currency,amount,paid_amount,fee,updated_at';

const iso = (time: number) => new Date(time).toISOString();

function zero(amount: string): string {
  return formatMinor(0n, amount.split('.')[1]?.length ?? 0);
}

function formatMinor(minor: bigint, scale: number): string {
  if (scale === 0) return minor.toString();
  const text = minor.toString().padStart(scale + 1, '0');
  return `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}

/** Our ids and references never hold these, but a settlement file must stay parseable whatever they hold. */
function csvCell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
