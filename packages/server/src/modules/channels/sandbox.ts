import { CURRENCIES } from '../../catalog.js';
import type { Connector } from './connector.js';

/**
 * The built-in sandbox channel as a connector. Its payer surface is the cashier page (the payer
 * action is a redirect to the payment's cashierUrl) and its "notifications" are the sandbox
 * helpers, which act on the order through the same service methods as any channel's updates.
 * It holds no state of its own: registering, sending and releasing are no-ops, a query knows
 * nothing beyond the platform's own order, and it receives no notifications over HTTP.
 */
export function sandboxConnector(publicUrl: string): Connector {
  const currencies = [...CURRENCIES.values()];
  return {
    kind: 'sandbox',
    name: 'sandbox',
    methods: currencies.flatMap((c) => c.methods.map((code) => ({ currency: c.code, code }))),
    payouts: currencies.map((c) => c.code),
    createPayment: async (order) => ({
      channelTradeNo: undefined,
      payerAction: { kind: 'redirect', url: `${publicUrl}/cashier/${order.orderNo}` },
    }),
    queryPayment: async () => undefined,
    createPayout: async () => ({ channelTradeNo: undefined }),
    releasePayout: async () => true,
    queryPayout: async () => undefined,
    verifyNotification: () => ({
      ok: false,
      code: 'UNAUTHORIZED',
      reason: 'the sandbox channel receives no notifications',
    }),
  };
}
