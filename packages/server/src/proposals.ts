import { DomainError, invalidState } from './errors.js';

/**
 * A change of money made by people is a proposal first: one operator proposes, another decides
 * (balance adjustments, fee plans). The rule both follow, checked on the proposal's row locked in
 * the deciding transaction: only an open proposal is decided, and its proposer approves nothing
 * of their own (a rejection of one's own proposal withdraws it, which is allowed).
 */
export function checkDecision(
  proposal: { readonly status: string; readonly proposed_by: string },
  decider: string,
  decision: 'approve' | 'reject',
  noun: string,
): void {
  if (proposal.status !== 'PROPOSED') throw invalidState(`this ${noun} is ${proposal.status.toLowerCase()} already`);
  if (decision === 'approve' && proposal.proposed_by === decider) {
    throw new DomainError('FORBIDDEN', `another operator approves this ${noun}: its proposer may not`);
  }
}

/** A reason a person gives for a change of money: 3 to 500 characters of text, no control characters. */
export const REASON_PATTERN = /^[^\p{Cc}]{3,500}$/u;
