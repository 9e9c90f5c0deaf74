import { z } from 'zod';
import { CURRENCIES, scaleOf } from '../../catalog.js';
import type { Db, Queryable } from '../../db/db.js';
import { DomainError, validationFailed } from '../../errors.js';
import { ulid } from '../../ids.js';
import { formatAmount } from '../../money.js';
import { checkDecision, REASON_PATTERN } from '../../proposals.js';
import { parseInput } from '../../validation.js';
import type { Audit, AuditContext } from '../audit/service.js';
import { isInsufficientBalance, type Ledger } from '../ledger/service.js';

/** An adjustment of a merchant's balance, as the back office shows it. */
export interface AdjustmentView {
  readonly adjustmentId: string;
  readonly merchant: string;
  readonly currency: string;
  /** Signed decimal: a credit is positive, a debit negative. */
  readonly amount: string;
  readonly reason: string;
  readonly status: 'PROPOSED' | 'BOOKED' | 'REJECTED';
  readonly proposedBy: string;
  readonly proposedAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly decisionNote: string | null;
}

interface AdjustmentRow {
  adjustment_id: string;
  merchant_id: bigint;
  currency: string;
  amount_minor: bigint;
  reason: string;
  status: AdjustmentView['status'];
  proposed_by: string;
  proposed_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
}

/** A signed amount: an optional minus, then as the merchant API writes amounts (no exponent, no plus). */
const SIGNED_AMOUNT = /^(-)?(0|[1-9][0-9]{0,14})(?:\.([0-9]{1,4}))?$/;

const proposeInput = z
  .object({
    merchant: z.string().max(100),
    currency: z.string().max(3),
    amount: z.string().max(25),
    reason: z.string().trim().regex(REASON_PATTERN, '3 to 500 characters'),
  })
  .strict();
const decideInput = z.object({ note: z.string().trim().max(500).optional() }).strict();

/** A signed decimal in `currency`'s minor units, or the field errors. */
function signedMinor(amount: string, currency: string): bigint {
  const match = SIGNED_AMOUNT.exec(amount);
  const scale = CURRENCIES.has(currency) ? scaleOf(currency) : 0;
  if (!match || (match[3]?.length ?? 0) > scale) {
    throw validationFailed([
      { field: 'amount', message: `a signed decimal with at most ${scale} fraction digits, e.g. -12.50` },
    ]);
  }
  const minor = BigInt(match[2] as string) * 10n ** BigInt(scale) + BigInt((match[3] ?? '').padEnd(scale, '0') || '0');
  if (minor === 0n) throw validationFailed([{ field: 'amount', message: 'not zero' }]);
  return match[1] === '-' ? -minor : minor;
}

/**
 * Balance adjustments (decisions.md, "Balance adjustments take two people"): a finance or admin
 * operator proposes one with its reason and nothing moves; a different one approves it, and only
 * then is it booked, as one ledger transaction in the approving transaction with its audit
 * entry; or rejects it. A debit beyond the available balance books nothing (INSUFFICIENT_BALANCE).
 */
export class Adjustments {
  constructor(
    private readonly db: Db,
    private readonly ledger: Pick<Ledger, 'postAdjustment'>,
    private readonly audit: Audit,
    private readonly now: () => number = Date.now,
  ) {}

  async propose(
    merchantOf: (accessKey: string) => Promise<{ id: bigint; accessKey: string }>,
    input: unknown,
    proposer: string,
    context: AuditContext,
  ): Promise<AdjustmentView> {
    const body = parseInput(proposeInput, input);
    if (!CURRENCIES.has(body.currency)) {
      throw validationFailed([{ field: 'currency', message: `one of ${[...CURRENCIES.keys()].join(', ')}` }]);
    }
    const amountMinor = signedMinor(body.amount, body.currency);
    const merchant = await merchantOf(body.merchant);
    const adjustmentId = `adj_${ulid(this.now())}`;
    const now = new Date(this.now());
    return this.db.transaction(async (tx) => {
      const inserted = await tx.query<AdjustmentRow>(
        `INSERT INTO balance_adjustments (adjustment_id, merchant_id, currency, amount_minor, reason, status, proposed_by, proposed_at)
         VALUES ($1, $2, $3, $4, $5, 'PROPOSED', $6, $7) RETURNING *`,
        [adjustmentId, merchant.id, body.currency, amountMinor, body.reason, proposer, now],
      );
      const row = inserted.rows[0] as AdjustmentRow;
      await this.audit.record(tx, context, {
        action: 'adjustment.proposed',
        merchant: merchant.accessKey,
        object: adjustmentId,
        detail: { currency: body.currency, amount: view(row, merchant.accessKey).amount, reason: body.reason },
      });
      return view(row, merchant.accessKey);
    });
  }

  /**
   * Approves (books) or rejects a proposed adjustment, under its row lock: two approvals at once
   * book it once (the second finds it booked: INVALID_STATE); the proposer's own approval is
   * FORBIDDEN; a debit beyond the available balance is INSUFFICIENT_BALANCE and changes nothing.
   */
  async decide(
    adjustmentId: string,
    decision: 'approve' | 'reject',
    input: unknown,
    decider: string,
    context: AuditContext,
    accessKeyOf: (merchantId: bigint, tx: Queryable) => Promise<string>,
  ): Promise<AdjustmentView> {
    const { note } = parseInput(decideInput, input ?? {});
    const now = new Date(this.now());
    try {
      return await this.db.transaction(async (tx) => {
        const rows = await tx.query<AdjustmentRow>(
          'SELECT * FROM balance_adjustments WHERE adjustment_id = $1 FOR UPDATE',
          [adjustmentId],
        );
        const row = rows.rows[0];
        if (!row) throw new DomainError('NOT_FOUND', 'no such adjustment');
        checkDecision(row, decider, decision, 'adjustment');
        const accessKey = await accessKeyOf(row.merchant_id, tx);
        const updated = await tx.query<AdjustmentRow>(
          `UPDATE balance_adjustments SET status = $2, decided_by = $3, decided_at = $4, decision_note = $5
            WHERE adjustment_id = $1 RETURNING *`,
          [adjustmentId, decision === 'approve' ? 'BOOKED' : 'REJECTED', decider, now, note ?? null],
        );
        let transactionId: string | undefined;
        if (decision === 'approve') {
          const posted = await this.ledger.postAdjustment(
            tx,
            {
              adjustmentId,
              merchantId: row.merchant_id,
              currency: row.currency,
              amountMinor: row.amount_minor,
              reason: row.reason,
            },
            now,
          );
          if (!posted.posted) throw new Error(`adjustment ${adjustmentId} was booked before it was approved`);
          transactionId = posted.transactionId.toString();
        }
        const booked = view(updated.rows[0] as AdjustmentRow, accessKey);
        await this.audit.record(tx, context, {
          action: decision === 'approve' ? 'adjustment.booked' : 'adjustment.rejected',
          merchant: accessKey,
          object: adjustmentId,
          detail: {
            currency: booked.currency,
            amount: booked.amount,
            reason: booked.reason,
            proposedBy: booked.proposedBy,
            ...(transactionId === undefined ? {} : { ledgerTransaction: transactionId }),
            ...(note ? { note } : {}),
          },
        });
        return booked;
      });
    } catch (error) {
      if (isInsufficientBalance(error)) {
        throw new DomainError(
          'INSUFFICIENT_BALANCE',
          "the debit exceeds the merchant's available balance: nothing was booked",
        );
      }
      throw error;
    }
  }

  /** Adjustments, the newest first: every merchant's, or one's, by status. */
  async list(
    filters: { merchantId?: bigint | undefined; status?: string | undefined },
    accessKeys: (ids: readonly bigint[]) => Promise<Map<bigint, string>>,
    limit = 200,
  ): Promise<AdjustmentView[]> {
    const rows = await this.db.query<AdjustmentRow>(
      `SELECT * FROM balance_adjustments
        WHERE ($1::bigint IS NULL OR merchant_id = $1) AND ($2::text IS NULL OR status = $2)
        ORDER BY proposed_at DESC, id DESC LIMIT $3`,
      [filters.merchantId ?? null, filters.status ?? null, limit],
    );
    const keys = await accessKeys([...new Set(rows.rows.map((r) => r.merchant_id))]);
    return rows.rows.map((r) => view(r, keys.get(r.merchant_id) ?? ''));
  }

  /** One adjustment (the order page of an adjustment's ledger transaction links to it). */
  async get(adjustmentId: string, accessKeyOf: (merchantId: bigint) => Promise<string>): Promise<AdjustmentView> {
    const rows = await this.db.query<AdjustmentRow>('SELECT * FROM balance_adjustments WHERE adjustment_id = $1', [
      adjustmentId,
    ]);
    const row = rows.rows[0];
    if (!row) throw new DomainError('NOT_FOUND', 'no such adjustment');
    return view(row, await accessKeyOf(row.merchant_id));
  }
}

function view(row: AdjustmentRow, accessKey: string): AdjustmentView {
  return {
    adjustmentId: row.adjustment_id,
    merchant: accessKey,
    currency: row.currency,
    amount: formatAmount(row.amount_minor, scaleOf(row.currency)),
    reason: row.reason,
    status: row.status,
    proposedBy: row.proposed_by,
    proposedAt: row.proposed_at.getTime(),
    decidedBy: row.decided_by,
    decidedAt: row.decided_at?.getTime() ?? null,
    decisionNote: row.decision_note,
  };
}
