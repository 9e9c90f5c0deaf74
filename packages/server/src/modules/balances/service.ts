import type { Balance } from '@paygate/wire';
import { validationFailed } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { CURRENCIES } from '../../catalog.js';
import type { Ledger } from '../ledger/service.js';

/** A merchant's money in one currency, decimal strings in major units (the wire schema `Balance`). */
export type BalanceView = Balance;

/**
 * Balances per currency, read from the ledger's accounts. Every platform currency is listed,
 * with zeros where the merchant has no money yet, so a client never has to tell "no account"
 * from "nothing in it".
 */
export class Balances {
  constructor(private readonly ledger: Ledger) {}

  async list(merchantId: bigint, currency?: string): Promise<BalanceView[]> {
    if (currency !== undefined && !CURRENCIES.has(currency)) {
      throw validationFailed([{ field: 'currency', message: 'not a supported currency' }]);
    }
    const balances = await this.ledger.balances(merchantId);
    return [...CURRENCIES.values()]
      .filter((info) => currency === undefined || info.code === currency)
      .map((info) => {
        const balance = balances.get(info.code) ?? { available: 0n, reserved: 0n };
        return {
          currency: info.code,
          available: formatAmount(balance.available, info.scale),
          reserved: formatAmount(balance.reserved, info.scale),
        };
      });
  }
}
