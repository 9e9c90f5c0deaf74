import type { CurrencyRates, Fee as FeeView, PaymentMethodCode } from '@paygate/wire';
import { z } from 'zod';
import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db/db.js';
import { DomainError, type FieldError, validationFailed } from '../../errors.js';
import { ulid } from '../../ids.js';
import { formatAmount } from '../../money.js';
import { CURRENCIES } from '../../catalog.js';
import { applyFeeOverrides, type Fee, type FeeOverrides, type FeeSchedule } from '../../fees.js';
import { checkDecision, REASON_PATTERN } from '../../proposals.js';
import { parseInput } from '../../validation.js';
import type { AuditContext, Audit } from '../audit/service.js';
import { canonicalJson } from '../audit/chain.js';

/** A fee as the API shows it and the rates of one currency: the wire schemas `Fee` and `CurrencyRates`. */
export type { CurrencyRates, FeeView };

const feeView = (fee: Fee, scale: number): FeeView => ({
  feePercent: formatAmount(BigInt(fee.percentBps), 2),
  feeFixed: formatAmount(fee.fixedMinor, scale),
});

/** A proposed change of a merchant's fee plan, as the back office lists it. */
export interface FeePlanChange {
  readonly changeId: string;
  readonly merchant: string;
  /** The whole plan proposed: overrides of the platform's rate table (empty: back to it). */
  readonly plan: FeeOverrides;
  readonly reason: string;
  readonly status: 'PROPOSED' | 'APPLIED' | 'REJECTED';
  readonly proposedBy: string;
  readonly proposedAt: number;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly decisionNote: string | null;
}

interface ChangeRow {
  change_id: string;
  merchant_id: bigint;
  plan: string;
  reason: string;
  status: FeePlanChange['status'];
  proposed_by: string;
  proposed_at: Date;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
}

const proposeInput = z
  .object({
    plan: z.record(z.string(), z.unknown()),
    reason: z.string().trim().regex(REASON_PATTERN, '3 to 500 characters'),
  })
  .strict();
const decideInput = z.object({ note: z.string().trim().max(500).optional() }).strict();

/**
 * Fees: the platform's rate table (`PAYGATE_FEES` over the defaults) and each merchant's own plan
 * over it, changed by two operators (one proposes, another approves, in the transaction that
 * applies it). What `/api/v1/rates` answers a merchant and what its orders are charged is its
 * schedule: the platform's table with its plan's overrides.
 */
export class Fees {
  constructor(
    private readonly config: Pick<Config, 'fees'>,
    private readonly db?: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** A merchant's schedule, read in `q` (an order's transaction charges by the plan it sees). */
  async schedule(q: Queryable, merchantId: bigint): Promise<FeeSchedule> {
    const plan = await this.planRow(q, merchantId);
    if (plan === undefined) return this.config.fees;
    const applied = applyFeeOverrides(this.config.fees, JSON.parse(plan.plan) as unknown);
    // A stored plan was checked when proposed; one the catalogue no longer takes falls back to the platform's.
    return applied.ok ? applied.schedule : this.config.fees;
  }

  private async planRow(q: Queryable, merchantId: bigint) {
    const rows = await q.query<{ plan: string; change_id: string; updated_at: Date }>(
      'SELECT plan, change_id, updated_at FROM merchant_fee_plans WHERE merchant_id = $1',
      [merchantId],
    );
    return rows.rows[0];
  }

  /** The rate table (a merchant's, when `merchantId` is given), filtered by currency and method. */
  async table(
    filters: { currency?: string | undefined; method?: string | undefined } = {},
    merchantId?: bigint,
  ): Promise<CurrencyRates[]> {
    const errors: FieldError[] = [];
    if (filters.currency !== undefined && !CURRENCIES.has(filters.currency)) {
      errors.push({ field: 'currency', message: 'not a supported currency' });
    }
    const methods = new Set([...CURRENCIES.values()].flatMap((info) => info.methods));
    if (filters.method !== undefined && !methods.has(filters.method)) {
      errors.push({ field: 'method', message: 'not a supported payment method' });
    }
    if (errors.length > 0) throw validationFailed(errors);
    const schedule =
      merchantId === undefined || this.db === undefined ? this.config.fees : await this.schedule(this.db, merchantId);
    const zero: Fee = { percentBps: 0, fixedMinor: 0n };
    return [...CURRENCIES.values()]
      .filter((info) => filters.currency === undefined || info.code === filters.currency)
      .filter((info) => filters.method === undefined || info.methods.includes(filters.method))
      .map((info) => ({
        currency: info.code,
        scale: info.scale,
        payments: info.methods
          .filter((method) => filters.method === undefined || method === filters.method)
          .map((method) => ({
            // The catalogue's methods are checked to be wire payment methods (catalog.ts).
            method: method as PaymentMethodCode,
            ...feeView(schedule.payments[info.code]?.[method] ?? zero, info.scale),
          })),
        payout: feeView(schedule.payouts[info.code] ?? zero, info.scale),
      }));
  }

  /** A merchant's plan: its overrides (none: the platform's table) and the rates they make. */
  async planOf(merchantId: bigint) {
    const row = await this.planRow(this.requireDb(), merchantId);
    return {
      overrides: row === undefined ? {} : (JSON.parse(row.plan) as FeeOverrides),
      changeId: row?.change_id ?? null,
      updatedAt: row?.updated_at.getTime() ?? null,
      rates: await this.table({}, merchantId),
    };
  }

  private requireDb(): Db {
    if (this.db === undefined) throw new Error('fee plans need the database');
    return this.db;
  }

  /** Proposes a merchant's whole new plan (checked as `PAYGATE_FEES` is); nothing changes until approved. */
  async propose(
    merchant: { id: bigint; accessKey: string },
    input: unknown,
    proposer: string,
    context: AuditContext,
    audit: Audit,
  ): Promise<FeePlanChange> {
    const { plan, reason } = parseInput(proposeInput, input);
    const applied = applyFeeOverrides(this.config.fees, plan);
    if (!applied.ok) throw validationFailed(applied.problems.map((message) => ({ field: 'plan', message })));
    const changeId = `fee_${ulid(this.now())}`;
    const now = new Date(this.now());
    return this.requireDb().transaction(async (tx) => {
      const inserted = await tx.query<ChangeRow>(
        `INSERT INTO fee_plan_changes (change_id, merchant_id, plan, reason, status, proposed_by, proposed_at)
         VALUES ($1, $2, $3, $4, 'PROPOSED', $5, $6) RETURNING *`,
        [changeId, merchant.id, canonicalJson(applied.overrides), reason, proposer, now],
      );
      await audit.record(tx, context, {
        action: 'fee_plan.proposed',
        merchant: merchant.accessKey,
        object: changeId,
        detail: { plan: applied.overrides, reason },
      });
      return changeView(inserted.rows[0] as ChangeRow, merchant.accessKey);
    });
  }

  /**
   * Applies a proposed plan: by another operator than its proposer (FORBIDDEN otherwise), once
   * (INVALID_STATE for a change decided already), in the transaction that writes the plan and its
   * audit entry. Orders from then on are charged by it.
   */
  async decide(
    changeId: string,
    decision: 'approve' | 'reject',
    input: unknown,
    decider: string,
    context: AuditContext,
    audit: Audit,
    accessKeyOf: (merchantId: bigint, tx: Queryable) => Promise<string>,
  ): Promise<FeePlanChange> {
    const { note } = parseInput(decideInput, input ?? {});
    const now = new Date(this.now());
    return this.requireDb().transaction(async (tx) => {
      const rows = await tx.query<ChangeRow>('SELECT * FROM fee_plan_changes WHERE change_id = $1 FOR UPDATE', [
        changeId,
      ]);
      const change = rows.rows[0];
      if (!change) throw new DomainError('NOT_FOUND', 'no such fee plan change');
      checkDecision(change, decider, decision, 'fee plan change');
      const status = decision === 'approve' ? 'APPLIED' : 'REJECTED';
      const updated = await tx.query<ChangeRow>(
        `UPDATE fee_plan_changes SET status = $2, decided_by = $3, decided_at = $4, decision_note = $5
          WHERE change_id = $1 RETURNING *`,
        [changeId, status, decider, now, note ?? null],
      );
      if (decision === 'approve') {
        await tx.query(
          `INSERT INTO merchant_fee_plans (merchant_id, plan, change_id, updated_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (merchant_id) DO UPDATE SET plan = EXCLUDED.plan, change_id = EXCLUDED.change_id,
                                                   updated_at = EXCLUDED.updated_at`,
          [change.merchant_id, change.plan, changeId, now],
        );
      }
      const accessKey = await accessKeyOf(change.merchant_id, tx);
      await audit.record(tx, context, {
        action: decision === 'approve' ? 'fee_plan.applied' : 'fee_plan.rejected',
        merchant: accessKey,
        object: changeId,
        detail: { proposedBy: change.proposed_by, ...(note ? { note } : {}) },
      });
      return changeView(updated.rows[0] as ChangeRow, accessKey);
    });
  }

  /** Fee plan changes, the newest first (a merchant's, or every merchant's), with their access keys. */
  async changes(
    merchantId: bigint | undefined,
    accessKeys: (ids: readonly bigint[]) => Promise<Map<bigint, string>>,
    limit = 200,
  ): Promise<FeePlanChange[]> {
    const rows = await this.requireDb().query<ChangeRow>(
      `SELECT * FROM fee_plan_changes WHERE ($1::bigint IS NULL OR merchant_id = $1)
        ORDER BY proposed_at DESC, id DESC LIMIT $2`,
      [merchantId ?? null, limit],
    );
    const keys = await accessKeys([...new Set(rows.rows.map((r) => r.merchant_id))]);
    return rows.rows.map((r) => changeView(r, keys.get(r.merchant_id) ?? ''));
  }
}

function changeView(row: ChangeRow, accessKey: string): FeePlanChange {
  return {
    changeId: row.change_id,
    merchant: accessKey,
    plan: JSON.parse(row.plan) as FeeOverrides,
    reason: row.reason,
    status: row.status,
    proposedBy: row.proposed_by,
    proposedAt: row.proposed_at.getTime(),
    decidedBy: row.decided_by,
    decidedAt: row.decided_at?.getTime() ?? null,
    decisionNote: row.decision_note,
  };
}
