import type { Currency, LedgerEntry } from '@paygate/wire';
import type { Config } from '../../config.js';
import { type Db, prepared, type Queryable, sqlState } from '../../db/db.js';
import { perTurnLoader } from '../../db/per-turn.js';
import { validationFailed } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { afterCommit } from '../../observability/traced-db.js';
import { keysetPage } from '../../db/paging.js';
import { CURRENCIES, scaleOf } from '../../catalog.js';
import { countLedgerPosting } from '../../observability/metrics.js';
import { type FeeSchedule, paymentFee } from '../../fees.js';

/** A merchant's money in one currency, in minor units. */
export interface Balance {
  available: bigint;
  reserved: bigint;
}

/** Merchants' account balances, for many merchants at once (see Ledger.balancesOf). */
export const BALANCES = prepared(
  'ledger_balances_many',
  'SELECT merchant_id, currency, kind, balance FROM ledger_accounts WHERE merchant_id = ANY($1::bigint[])',
  { customPlan: true },
);

/** Merchant accounts: money the merchant may spend, and money held for its open payouts. */
export const MERCHANT_ACCOUNT_KINDS = ['available', 'reserved'] as const;
/** Platform accounts, one per currency: fees earned, what the channel holds for us, and corrections by operators. */
export const PLATFORM_ACCOUNT_KINDS = ['fee_revenue', 'channel_clearing', 'adjustments'] as const;
export type MerchantAccountKind = (typeof MERCHANT_ACCOUNT_KINDS)[number];
export type PlatformAccountKind = (typeof PLATFORM_ACCOUNT_KINDS)[number];
export type AccountKind = MerchantAccountKind | PlatformAccountKind;

export type TransactionKind =
  'payment' | 'payout_reserve' | 'payout_settle' | 'payout_release' | 'refund' | 'adjustment';

/** An account: a merchant's (by kind) or the platform's (merchantId null). */
export type Account =
  | { readonly merchantId: bigint; readonly kind: MerchantAccountKind }
  | { readonly merchantId: null; readonly kind: PlatformAccountKind };

export const merchantAccount = (merchantId: bigint, kind: MerchantAccountKind): Account => ({ merchantId, kind });
export const platformAccount = (kind: PlatformAccountKind): Account => ({ merchantId: null, kind });

/** One side of a posting. Signed like the entries: credit positive, debit negative. */
export interface Leg {
  readonly account: Account;
  readonly amount: bigint;
}
export const credit = (account: Account, amount: bigint): Leg => ({ account, amount });
export const debit = (account: Account, amount: bigint): Leg => ({ account, amount: -amount });

/** A business fact to record: balanced legs in one currency under an idempotency reference. */
export interface Posting {
  /** The fact's identity; posting it again posts nothing. */
  readonly reference: string;
  /** A second identity of the same fact (a refund by refundNo); a conflict on it posts nothing either. */
  readonly altReference?: string;
  readonly kind: TransactionKind;
  readonly orderNo: string;
  readonly currency: string;
  readonly legs: readonly Leg[];
  /** What a person wrote for the fact (an adjustment's reason); shown to the merchant with the entry. */
  readonly memo?: string;
}

export type PostResult =
  { readonly posted: true; readonly transactionId: bigint; readonly createdAt: Date } | { readonly posted: false };

/** The CHECK that keeps merchant balances non-negative (migrations/0003_money.sql). */
const NONNEGATIVE_CONSTRAINT = 'ledger_accounts_merchant_nonnegative';
/** SQLSTATE 23514: a CHECK constraint refused the row. */
const CHECK_VIOLATION = '23514';

/**
 * True when `error` is the database refusing to take a merchant account below zero. Callers
 * branch on this instead of reading the balance first: under concurrency only the constraint,
 * evaluated under the account's row lock, sees the balance that counts.
 */
export function isInsufficientBalance(error: unknown): boolean {
  return (
    sqlState(error) === CHECK_VIOLATION &&
    typeof error === 'object' &&
    error !== null &&
    (error as { constraint?: unknown }).constraint === NONNEGATIVE_CONSTRAINT
  );
}

/** One ledger entry on a merchant account, as the API and the portal show it (the wire schema `LedgerEntry`). */
export type EntryView = LedgerEntry;

export interface EntryFilters {
  currency?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  pageSize: number;
  cursor?: string | undefined;
}

/** One ledger transaction of an order with every entry (the platform's accounts included). */
export interface OrderTransaction {
  readonly transactionId: string;
  readonly reference: string;
  readonly kind: TransactionKind;
  readonly reason?: string;
  readonly at: number;
  readonly entries: { account: AccountKind; owner: 'merchant' | 'platform'; currency: string; amount: string }[];
}

/** The platform's money in one currency (decimal strings). */
export interface PlatformTotals {
  readonly currency: string;
  readonly merchantsAvailable: string;
  readonly merchantsReserved: string;
  readonly feesEarned: string;
  readonly channelClearing: string;
  readonly adjustments: string;
}

/** Money moved in a period in one currency. */
export interface VolumeTotals {
  readonly currency: string;
  readonly payments: { readonly count: number; readonly amount: string };
  readonly payouts: { readonly count: number; readonly amount: string };
  readonly feesEarned: string;
}

/** What `audit` found wrong; every list is empty on healthy books. */
export interface AuditReport {
  unbalanced: { transactionId: bigint; currency: string; total: bigint }[];
  drifted: { accountId: bigint; balance: bigint; sum: bigint }[];
  negative: { accountId: bigint; balance: bigint }[];
}

interface AccountRow {
  id: bigint;
  merchant_id: bigint | null;
  kind: AccountKind;
  balance: bigint;
}

/**
 * What the ledger needs of a payment to post or price it: the fields of its row that name the
 * order, the merchant, the money and the method (the payments module passes its row as is).
 */
export interface PaymentPosting {
  readonly order_no: string;
  readonly merchant_id: bigint;
  readonly currency: string;
  readonly method: string;
  readonly amount_minor: bigint;
  readonly paid_amount_minor: bigint | null;
}

/** What the ledger needs of a payout to post its steps (the payouts module passes its row as is). */
export interface PayoutPosting {
  readonly order_no: string;
  readonly merchant_id: bigint;
  readonly currency: string;
  readonly amount_minor: bigint;
  readonly fee_minor: bigint;
}

/** The merchant accounts a payout moves money between. */
const payoutAccounts = (payout: PayoutPosting) => ({
  available: merchantAccount(payout.merchant_id, 'available'),
  reserved: merchantAccount(payout.merchant_id, 'reserved'),
});

const keyOf = (account: Account) => `${account.merchantId ?? ''}/${account.kind}`;

/**
 * The double-entry ledger. Postings are written inside the caller's transaction, so that money
 * moves exactly when the order changes state and its event is written. The database enforces
 * what must always hold: every transaction balances per currency (checked at commit), entries
 * and transactions are never updated or deleted, balances equal the sum of their entries, and
 * no merchant account goes below zero.
 */
export class Ledger {
  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'fees'>,
    private readonly now: () => number = Date.now,
    /** A merchant's fee schedule (its own plan over the platform's table), read in the posting's transaction. */
    private readonly feeSchedule: (q: Queryable, merchantId: bigint) => Promise<FeeSchedule> = async () =>
      this.config.fees,
  ) {}

  /**
   * Posts `posting` once: when its reference (or alternative reference) was posted before, it
   * writes nothing and returns `posted: false`. Account rows are locked in id order so that
   * concurrent postings over the same accounts queue instead of deadlocking.
   */
  async post(tx: Queryable, posting: Posting, at: Date = new Date(this.now())): Promise<PostResult> {
    const legs = posting.legs.filter((leg) => leg.amount !== 0n);
    const total = legs.reduce((sum, leg) => sum + leg.amount, 0n);
    // A programming error, caught here with a clear message; the database would refuse it anyway.
    if (total !== 0n || legs.length < 2) throw new Error(`posting ${posting.reference} does not balance`);

    const inserted = await tx.query<{ id: bigint }>(
      `INSERT INTO ledger_transactions (reference, alt_reference, kind, order_no, created_at, memo)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id`,
      [posting.reference, posting.altReference ?? null, posting.kind, posting.orderNo, at, posting.memo ?? null],
    );
    const transaction = inserted.rows[0];
    if (!transaction) return { posted: false };

    const accounts = await this.lockAccounts(
      tx,
      posting.currency,
      legs.map((leg) => leg.account),
    );
    const params: unknown[] = [transaction.id, posting.currency, at];
    const rows = legs.map((leg) => {
      params.push(accounts.get(keyOf(leg.account)), leg.amount);
      return `($1, $${params.length - 1}, $2, $${params.length}, $3)`;
    });
    await tx.query(
      `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount, created_at) VALUES ${rows.join(', ')}`,
      params,
    );
    afterCommit(tx, () => countLedgerPosting(posting.kind));
    return { posted: true, transactionId: transaction.id, createdAt: at };
  }

  /**
   * Posts many postings at once, inside the caller's transaction (a bank file settling thousands
   * of payouts together): each exactly as `post` would — once per reference, balanced, over
   * accounts locked in id order — in a few statements for all instead of a few each. Answers the
   * references posted now (the others were posted before).
   */
  async postMany(tx: Queryable, postings: readonly Posting[], at: Date): Promise<Set<string>> {
    const wanted = postings.map((posting) => ({ ...posting, legs: posting.legs.filter((leg) => leg.amount !== 0n) }));
    for (const posting of wanted) {
      const total = posting.legs.reduce((sum, leg) => sum + leg.amount, 0n);
      if (total !== 0n || posting.legs.length < 2) throw new Error(`posting ${posting.reference} does not balance`);
    }
    if (wanted.length === 0) return new Set();
    const inserted = await tx.query<{ id: bigint; reference: string }>(
      `INSERT INTO ledger_transactions (reference, alt_reference, kind, order_no, created_at)
       SELECT t.reference, t.alt_reference, t.kind, t.order_no, $5
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(reference, alt_reference, kind, order_no)
       ON CONFLICT DO NOTHING RETURNING id, reference`,
      [
        wanted.map((posting) => posting.reference),
        wanted.map((posting) => posting.altReference ?? null),
        wanted.map((posting) => posting.kind),
        wanted.map((posting) => posting.orderNo),
        at,
      ],
    );
    const ids = new Map(inserted.rows.map((row) => [row.reference, row.id]));
    const posted = wanted.filter((posting) => ids.has(posting.reference));
    const byCurrency = new Map<string, (typeof posted)[number][]>();
    for (const posting of posted) {
      const group = byCurrency.get(posting.currency);
      if (group) group.push(posting);
      else byCurrency.set(posting.currency, [posting]);
    }
    for (const [currency, group] of byCurrency) {
      const accounts = await this.lockAccounts(
        tx,
        currency,
        group.flatMap((posting) => posting.legs.map((leg) => leg.account)),
      );
      const legs = group.flatMap((posting) =>
        posting.legs.map((leg) => ({ transaction: ids.get(posting.reference) as bigint, leg })),
      );
      await tx.query(
        `INSERT INTO ledger_entries (transaction_id, account_id, currency, amount, created_at)
         SELECT t.transaction_id, t.account_id, $3, t.amount, $4
           FROM unnest($1::bigint[], $2::bigint[], $5::bigint[]) AS t(transaction_id, account_id, amount)`,
        [
          legs.map(({ transaction }) => transaction.toString()),
          legs.map(({ leg }) => (accounts.get(keyOf(leg.account)) as bigint).toString()),
          currency,
          at,
          legs.map(({ leg }) => leg.amount.toString()),
        ],
      );
    }
    afterCommit(tx, () => {
      for (const posting of posted) countLedgerPosting(posting.kind);
    });
    return new Set(posted.map((posting) => posting.reference));
  }

  /** Many payouts SUCCEEDED or FAILED at once: each one's settle or release as `postMany` posts them. */
  async settleOrReleasePayouts(
    tx: Queryable,
    payouts: readonly (PayoutPosting & { readonly status: 'SUCCEEDED' | 'FAILED' })[],
    at: Date,
  ): Promise<void> {
    const postings = payouts.map((payout): Posting => {
      const total = payout.amount_minor + payout.fee_minor;
      const { available, reserved } = payoutAccounts(payout);
      const step = payout.status === 'SUCCEEDED' ? 'settle' : 'release';
      return {
        reference: `payout:${payout.order_no}:${step}`,
        kind: `payout_${step}`,
        orderNo: payout.order_no,
        currency: payout.currency,
        legs:
          payout.status === 'SUCCEEDED'
            ? [
                debit(reserved, total),
                credit(platformAccount('channel_clearing'), payout.amount_minor),
                credit(platformAccount('fee_revenue'), payout.fee_minor),
              ]
            : [debit(reserved, total), credit(available, total)],
      };
    });
    await this.postMany(tx, postings, at);
  }

  /** Creates missing accounts, then locks all of them in id order; returns ids by account key. */
  private async lockAccounts(
    tx: Queryable,
    currency: string,
    wanted: readonly Account[],
  ): Promise<Map<string, bigint>> {
    const unique = [...new Map(wanted.map((account) => [keyOf(account), account])).values()];
    const params: unknown[] = [currency];
    const clauses = unique.map((account) => {
      params.push(account.kind);
      if (account.merchantId === null) return `(merchant_id IS NULL AND kind = $${params.length})`;
      params.push(account.merchantId);
      return `(merchant_id = $${params.length} AND kind = $${params.length - 1})`;
    });
    const select = `SELECT id, merchant_id, kind, balance FROM ledger_accounts WHERE currency = $1 AND (${clauses.join(' OR ')}) ORDER BY id`;
    const existing = await tx.query<AccountRow>(select, params);
    if (existing.rows.length < unique.length) {
      const have = new Set(existing.rows.map((row) => `${row.merchant_id ?? ''}/${row.kind}`));
      for (const account of unique) {
        if (have.has(keyOf(account))) continue;
        // Another transaction may be creating the same account: ON CONFLICT waits for it and keeps its row.
        await tx.query(
          'INSERT INTO ledger_accounts (merchant_id, currency, kind) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
          [account.merchantId, currency, account.kind],
        );
      }
    }
    const locked = await tx.query<AccountRow>(`${select} FOR UPDATE`, params);
    return new Map(locked.rows.map((row) => [`${row.merchant_id ?? ''}/${row.kind}`, row.id]));
  }

  /**
   * A payment became SUCCEEDED: the channel owes us what the payer paid; the merchant gets it less
   * the method's fee, which the platform earns. Runs in the payment's transaction (PaymentHooks).
   */
  async creditPayment(tx: Queryable, payment: PaymentPosting): Promise<PostResult> {
    const paid = payment.paid_amount_minor ?? payment.amount_minor;
    const fee = paymentFee(await this.feeSchedule(tx, payment.merchant_id), payment.currency, payment.method, paid);
    return this.post(tx, {
      reference: `payment:${payment.order_no}:succeeded`,
      kind: 'payment',
      orderNo: payment.order_no,
      currency: payment.currency,
      legs: [
        debit(platformAccount('channel_clearing'), paid),
        credit(merchantAccount(payment.merchant_id, 'available'), paid - fee),
        credit(platformAccount('fee_revenue'), fee),
      ],
    });
  }

  /**
   * Many payments SUCCEEDED at once (a bank file's credits): each one's credit as `creditPayment`
   * posts it, posted together (`postMany`), each merchant's fee plan read once.
   */
  async creditPayments(tx: Queryable, payments: readonly PaymentPosting[], at: Date): Promise<void> {
    const schedules = new Map<bigint, FeeSchedule>();
    const postings: Posting[] = [];
    for (const payment of payments) {
      let schedule = schedules.get(payment.merchant_id);
      if (schedule === undefined) {
        schedule = await this.feeSchedule(tx, payment.merchant_id);
        schedules.set(payment.merchant_id, schedule);
      }
      const paid = payment.paid_amount_minor ?? payment.amount_minor;
      const fee = paymentFee(schedule, payment.currency, payment.method, paid);
      postings.push({
        reference: `payment:${payment.order_no}:succeeded`,
        kind: 'payment',
        orderNo: payment.order_no,
        currency: payment.currency,
        legs: [
          debit(platformAccount('channel_clearing'), paid),
          credit(merchantAccount(payment.merchant_id, 'available'), paid - fee),
          credit(platformAccount('fee_revenue'), fee),
        ],
      });
    }
    await this.postMany(tx, postings, at);
  }

  /** A payout was created: amount + fee move from the merchant's available balance to reserved. */
  reservePayout(tx: Queryable, payout: PayoutPosting, at: Date): Promise<PostResult> {
    const total = payout.amount_minor + payout.fee_minor;
    const { available, reserved } = payoutAccounts(payout);
    return this.postPayout(tx, payout, 'reserve', [debit(available, total), credit(reserved, total)], at);
  }

  /** A payout SUCCEEDED: its reserve goes out, the amount to the channel and the fee to the platform. */
  settlePayout(tx: Queryable, payout: PayoutPosting, at: Date): Promise<PostResult> {
    const legs = [
      debit(payoutAccounts(payout).reserved, payout.amount_minor + payout.fee_minor),
      credit(platformAccount('channel_clearing'), payout.amount_minor),
      credit(platformAccount('fee_revenue'), payout.fee_minor),
    ];
    return this.postPayout(tx, payout, 'settle', legs, at);
  }

  /** A payout FAILED: its reserve goes back to the merchant's available balance. */
  releasePayout(tx: Queryable, payout: PayoutPosting, at: Date): Promise<PostResult> {
    const total = payout.amount_minor + payout.fee_minor;
    const { available, reserved } = payoutAccounts(payout);
    return this.postPayout(tx, payout, 'release', [debit(reserved, total), credit(available, total)], at);
  }

  /** One step of a payout's life, posted once under `payout:<orderNo>:<step>`. */
  private postPayout(
    tx: Queryable,
    payout: PayoutPosting,
    step: 'reserve' | 'settle' | 'release',
    legs: readonly Leg[],
    at: Date,
  ): Promise<PostResult> {
    const posting: Posting = {
      reference: `payout:${payout.order_no}:${step}`,
      kind: `payout_${step}`,
      orderNo: payout.order_no,
      currency: payout.currency,
      legs,
    };
    return this.post(tx, posting, at);
  }

  /**
   * The channel returned a SUCCEEDED payout: the merchant gets the full principal back (not the
   * fee: the platform did the work). Once per order and once per refundNo of the merchant.
   */
  refundPayout(tx: Queryable, payout: PayoutPosting, refundNo: string, at: Date): Promise<PostResult> {
    return this.post(
      tx,
      {
        reference: `refund:${payout.order_no}`,
        altReference: `refund-no:${payout.merchant_id}:${refundNo}`,
        kind: 'refund',
        orderNo: payout.order_no,
        currency: payout.currency,
        legs: [
          debit(platformAccount('channel_clearing'), payout.amount_minor),
          credit(merchantAccount(payout.merchant_id, 'available'), payout.amount_minor),
        ],
      },
      at,
    );
  }

  /**
   * A payment's fee and what the merchant nets: as booked when it SUCCEEDED (`booked`), otherwise
   * what the rate table would charge on its amount if it were paid in full.
   */
  async paymentCharges(payment: PaymentPosting): Promise<{ fee: string; net: string; booked: boolean }> {
    const scale = scaleOf(payment.currency);
    const legs = await this.db.query<{ kind: AccountKind; amount: bigint }>(
      `SELECT a.kind, e.amount FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.reference = $1 AND (a.merchant_id = $2 OR a.kind = 'fee_revenue')`,
      [`payment:${payment.order_no}:succeeded`, payment.merchant_id],
    );
    const fee = legs.rows.find((leg) => leg.kind === 'fee_revenue');
    const net = legs.rows.find((leg) => leg.kind === 'available');
    // A zero fee has no leg (entries are never zero).
    if (net) return { fee: formatAmount(fee?.amount ?? 0n, scale), net: formatAmount(net.amount, scale), booked: true };
    const schedule = await this.feeSchedule(this.db, payment.merchant_id);
    const expected = paymentFee(schedule, payment.currency, payment.method, payment.amount_minor);
    return {
      fee: formatAmount(expected, scale),
      net: formatAmount(payment.amount_minor - expected, scale),
      booked: false,
    };
  }

  /** A merchant's balances per currency (minor units); currencies without accounts are absent. */
  async balances(merchantId: bigint): Promise<Map<string, Balance>> {
    return this.balancesOf.load(merchantId);
  }

  /**
   * Merchants' balances outside a transaction, batched per turn of the event loop (see
   * perTurnLoader): the balance reads of every request in one turn are one statement.
   */
  private readonly balancesOf = perTurnLoader<bigint, Map<string, Balance>>(async (merchantIds) => {
    const distinct = [...new Set(merchantIds)];
    const result = await this.db.query<{
      merchant_id: bigint;
      currency: string;
      kind: MerchantAccountKind;
      balance: bigint;
    }>(BALANCES, [distinct.map(String)]);
    const byMerchant = new Map<bigint, Map<string, Balance>>(distinct.map((id) => [id, new Map()]));
    for (const row of result.rows) {
      const balances = byMerchant.get(row.merchant_id) as Map<string, Balance>;
      const entry = balances.get(row.currency) ?? { available: 0n, reserved: 0n };
      entry[row.kind] = row.balance;
      balances.set(row.currency, entry);
    }
    // A fresh map per caller: a caller may change its own.
    return merchantIds.map((id) => new Map(byMerchant.get(id)));
  });

  /** A merchant's ledger entries, newest first, by currency and time (Unix ms, inclusive), paged. */
  async entries(merchantId: bigint, filters: EntryFilters): Promise<{ items: EntryView[]; nextCursor: string | null }> {
    if (filters.currency !== undefined && !CURRENCIES.has(filters.currency)) {
      throw validationFailed([{ field: 'currency', message: 'not a supported currency' }]);
    }
    const page = await keysetPage<{
      id: bigint;
      amount: bigint;
      currency: Currency;
      created_at: Date;
      account: MerchantAccountKind;
      reference: string;
      kind: TransactionKind;
      order_no: string;
      memo: string | null;
    }>(this.db, {
      select: `SELECT e.id, e.amount, e.currency, e.created_at, a.kind AS account, t.reference, t.kind, t.order_no, t.memo
                 FROM ledger_entries e
                 JOIN ledger_accounts a ON a.id = e.account_id
                 JOIN ledger_transactions t ON t.id = e.transaction_id`,
      alias: 'e.',
      equals: { 'a.merchant_id': merchantId, 'e.currency': filters.currency },
      from: filters.from,
      to: filters.to,
      cursor: filters.cursor,
      pageSize: filters.pageSize,
    });
    return {
      items: page.rows.map((row) => ({
        entryId: row.id.toString(),
        reference: row.reference,
        transactionKind: row.kind,
        orderNo: row.order_no,
        ...(row.memo === null ? {} : { reason: row.memo }),
        account: row.account,
        currency: row.currency,
        amount: formatAmount(row.amount, scaleOf(row.currency)),
        createdAt: row.created_at.getTime(),
      })),
      nextCursor: page.nextCursor,
    };
  }

  /**
   * A balance adjustment approved by the platform's operators: the merchant's available balance
   * moves by `amountMinor` exactly (signed), against the platform's `adjustments` account, as one
   * transaction carrying the reason. A debit beyond the available balance is refused by the
   * database's non-negative check (isInsufficientBalance), and the caller's transaction with it.
   */
  async postAdjustment(
    tx: Queryable,
    adjustment: {
      readonly adjustmentId: string;
      readonly merchantId: bigint;
      readonly currency: string;
      readonly amountMinor: bigint;
      readonly reason: string;
    },
    at: Date,
  ): Promise<PostResult> {
    const merchant = merchantAccount(adjustment.merchantId, 'available');
    const platform = platformAccount('adjustments');
    return this.post(
      tx,
      {
        reference: `adjustment:${adjustment.adjustmentId}`,
        kind: 'adjustment',
        orderNo: adjustment.adjustmentId,
        currency: adjustment.currency,
        memo: adjustment.reason,
        legs: [credit(merchant, adjustment.amountMinor), debit(platform, adjustment.amountMinor)],
      },
      at,
    );
  }

  /**
   * Every ledger transaction of one order (or adjustment), oldest first, with all its entries,
   * the platform's accounts included: the order's story in the back office.
   */
  async transactionsOf(orderNo: string): Promise<OrderTransaction[]> {
    const rows = await this.db.query<{
      id: bigint;
      reference: string;
      kind: TransactionKind;
      memo: string | null;
      created_at: Date;
      merchant_id: bigint | null;
      account: AccountKind;
      currency: string;
      amount: bigint;
    }>(
      `SELECT t.id, t.reference, t.kind, t.memo, t.created_at, a.merchant_id, a.kind AS account, e.currency, e.amount
         FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.order_no = $1
        ORDER BY t.id, e.id`,
      [orderNo],
    );
    const byId = new Map<bigint, OrderTransaction>();
    for (const row of rows.rows) {
      let transaction = byId.get(row.id);
      if (!transaction) {
        transaction = {
          transactionId: row.id.toString(),
          reference: row.reference,
          kind: row.kind,
          ...(row.memo === null ? {} : { reason: row.memo }),
          at: row.created_at.getTime(),
          entries: [],
        };
        byId.set(row.id, transaction);
      }
      transaction.entries.push({
        account: row.account,
        owner: row.merchant_id === null ? 'platform' : 'merchant',
        currency: row.currency,
        amount: formatAmount(row.amount, scaleOf(row.currency)),
      });
    }
    return [...byId.values()];
  }

  /**
   * The platform's money per currency: what merchants hold (available, reserved), what the
   * platform earned in fees, what the channels hold for it, and the net of operators' corrections.
   */
  async platformTotals(): Promise<PlatformTotals[]> {
    const rows = await this.db.query<{ currency: string; kind: AccountKind; total: bigint }>(
      'SELECT currency, kind, sum(balance)::bigint AS total FROM ledger_accounts GROUP BY currency, kind ORDER BY currency',
    );
    const byCurrency = new Map<string, Record<AccountKind, bigint>>();
    for (const row of rows.rows) {
      const totals = byCurrency.get(row.currency) ?? {
        available: 0n,
        reserved: 0n,
        fee_revenue: 0n,
        channel_clearing: 0n,
        adjustments: 0n,
      };
      totals[row.kind] = row.total;
      byCurrency.set(row.currency, totals);
    }
    return [...byCurrency].map(([currency, totals]) => {
      const scale = scaleOf(currency);
      return {
        currency,
        merchantsAvailable: formatAmount(totals.available, scale),
        merchantsReserved: formatAmount(totals.reserved, scale),
        feesEarned: formatAmount(totals.fee_revenue, scale),
        channelClearing: formatAmount(totals.channel_clearing, scale),
        adjustments: formatAmount(totals.adjustments, scale),
      };
    });
  }

  /**
   * Money moved in [from, to) per currency: payments credited (what payers paid), payouts settled
   * (what left for payees) and fees earned, each with its count of transactions.
   */
  async volume(from: number, to: number): Promise<VolumeTotals[]> {
    const rows = await this.db.query<{
      currency: string;
      kind: TransactionKind;
      n: bigint;
      total: bigint;
      fees: bigint;
    }>(
      `SELECT t.kind, e.currency, count(DISTINCT t.id)::bigint AS n,
              coalesce(sum(e.amount) FILTER (WHERE a.kind = 'channel_clearing'), 0)::bigint AS total,
              coalesce(sum(e.amount) FILTER (WHERE a.kind = 'fee_revenue'), 0)::bigint AS fees
         FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = e.account_id
        WHERE t.created_at >= $1 AND t.created_at < $2 AND t.kind IN ('payment', 'payout_settle')
        GROUP BY t.kind, e.currency`,
      [new Date(from), new Date(to)],
    );
    const byCurrency = new Map<string, { payments: [bigint, bigint]; payouts: [bigint, bigint]; fees: bigint }>();
    for (const row of rows.rows) {
      const totals = byCurrency.get(row.currency) ?? { payments: [0n, 0n], payouts: [0n, 0n], fees: 0n };
      // Payments debit the channel's clearing account (it owes us), settled payouts credit it.
      if (row.kind === 'payment') totals.payments = [row.n, -row.total];
      else totals.payouts = [row.n, row.total];
      totals.fees += row.fees;
      byCurrency.set(row.currency, totals);
    }
    return [...byCurrency].map(([currency, totals]) => {
      const scale = scaleOf(currency);
      return {
        currency,
        payments: { count: Number(totals.payments[0]), amount: formatAmount(totals.payments[1], scale) },
        payouts: { count: Number(totals.payouts[0]), amount: formatAmount(totals.payouts[1], scale) },
        feesEarned: formatAmount(totals.fees, scale),
      };
    });
  }

  /**
   * Checks the whole book: transactions that do not balance, balances that differ from the sum
   * of their entries, merchant balances below zero. For tests and operators; the database
   * prevents all three, so a non-empty report means the schema's guards were bypassed.
   */
  async audit(q: Queryable = this.db): Promise<AuditReport> {
    const unbalanced = await q.query<{ transaction_id: bigint; currency: string; total: bigint }>(
      `SELECT transaction_id, currency, sum(amount)::bigint AS total FROM ledger_entries
        GROUP BY transaction_id, currency HAVING sum(amount) <> 0`,
    );
    const drifted = await q.query<{ id: bigint; balance: bigint; sum: bigint }>(
      `SELECT a.id, a.balance, coalesce(sum(e.amount), 0)::bigint AS sum
         FROM ledger_accounts a LEFT JOIN ledger_entries e ON e.account_id = a.id
        GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(e.amount), 0)`,
    );
    const negative = await q.query<{ id: bigint; balance: bigint }>(
      'SELECT id, balance FROM ledger_accounts WHERE merchant_id IS NOT NULL AND balance < 0',
    );
    return {
      unbalanced: unbalanced.rows.map((r) => ({
        transactionId: r.transaction_id,
        currency: r.currency,
        total: r.total,
      })),
      drifted: drifted.rows.map((r) => ({ accountId: r.id, balance: r.balance, sum: r.sum })),
      negative: negative.rows.map((r) => ({ accountId: r.id, balance: r.balance })),
    };
  }
}
