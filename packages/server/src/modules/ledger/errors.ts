import { declareErrors, DomainError } from '../../errors.js';

/** The ledger module's failures. */
export const ledgerErrors = declareErrors({
  INSUFFICIENT_BALANCE: {
    status: 409,
    message: 'the available balance does not cover the amount and the fee',
    kind: 'business',
  },
});

declare module '../../errors.js' {
  interface ErrorDeclarations {
    ledger: typeof ledgerErrors;
  }
}

/** The merchant's available balance does not cover a payout and its fee. */
export const insufficientBalance = () =>
  new DomainError('INSUFFICIENT_BALANCE', ledgerErrors.INSUFFICIENT_BALANCE.message);
