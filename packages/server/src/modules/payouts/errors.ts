import { scaleOf } from '../../catalog.js';
import { declareErrors, DomainError } from '../../errors.js';
import { formatAmount } from '../../money.js';

/** The payouts module's failures: a payout the available balance does not cover (the ledger reserves; the payout is what is refused). */
export const payoutErrors = declareErrors({
  INSUFFICIENT_BALANCE: {
    status: 409,
    message: 'the available balance does not cover the amount and the fee',
    kind: 'business',
  },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    payouts: typeof payoutErrors;
  }
}

/** What a refused payout asked for, against what was available, for the answer's message. */
export interface BalanceShortfall {
  readonly currency: string;
  readonly available: bigint;
  readonly amount: bigint;
  readonly fee: bigint;
}

/** The merchant's available balance does not cover a payout and its fee; with the figures when known. */
export const insufficientBalance = (shortfall?: BalanceShortfall) => {
  if (!shortfall) return new DomainError('INSUFFICIENT_BALANCE', payoutErrors.INSUFFICIENT_BALANCE.message);
  const money = (minor: bigint) => formatAmount(minor, scaleOf(shortfall.currency));
  return new DomainError(
    'INSUFFICIENT_BALANCE',
    `the available balance is ${money(shortfall.available)} ${shortfall.currency}; this payout needs ` +
      `${money(shortfall.amount + shortfall.fee)} ${shortfall.currency} (amount ${money(shortfall.amount)} + fee ${money(shortfall.fee)})`,
  );
};
