import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PaygateClient } from '../client.js';
import { PaygateApiError } from '../errors.js';
import type { Payment, Payout } from '../types.js';
import { CliError, type ConfigFlags, clientSettings } from './config.js';

/** The events `trigger` can cause, as `orderType.status`. */
export const TRIGGER_EVENTS = [
  'payment.succeeded',
  'payment.failed',
  'payment.expired',
  'payment.canceled',
  'payout.succeeded',
  'payout.failed',
  'payout.refunded',
] as const;

/** Where webhooks go unless `--webhook-url` says otherwise: what `listen` serves by default. */
export const DEFAULT_TRIGGER_URL = 'http://127.0.0.1:4000/webhook';

const argsSchema = z.object({
  event: z.enum(TRIGGER_EVENTS, { error: `EVENT is one of ${TRIGGER_EVENTS.join(', ')}` }),
  webhookUrl: z.url({ protocol: /^https?$/, error: '--webhook-url is an http(s) URL' }),
});

/** One thing `trigger` did, in order. */
interface Step {
  readonly action: string;
  readonly orderNo: string;
  readonly status: string;
}

const PAYMENT_AMOUNT = '10.00';
const PAYOUT_AMOUNT = '10.00';
/** Credited by a funding payment when the balance cannot cover the payout. */
const FUNDING_AMOUNT = '100.00';
const PAYEE = { name: 'Sandbox Payee', accountNumber: '12345678', bankCode: '001', documentNumber: '00987654321' };

/**
 * `trigger EVENT [--webhook-url URL] [--json]`: creates a sandbox order whose webhook goes to
 * URL and drives it through the sandbox helpers until EVENT is sent (payouts: confirmed first,
 * and funded by a succeeded payment when the balance is short). Prints each step and the final
 * status; with `json`, one JSON object. Resolves the exit code.
 */
export async function trigger(
  positionals: readonly string[],
  options: { webhookUrl?: string | undefined; json: boolean; flags: ConfigFlags },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const parsed = argsSchema.safeParse({
    event: positionals[0]?.toLowerCase(),
    webhookUrl: options.webhookUrl ?? DEFAULT_TRIGGER_URL,
  });
  if (!parsed.success || positionals.length !== 1) {
    const problems = parsed.success ? ['give exactly one EVENT'] : parsed.error.issues.map((i) => i.message);
    throw new CliError(`trigger EVENT [--webhook-url URL]: ${problems.join('; ')}`, 2);
  }
  const { event, webhookUrl } = parsed.data;
  const client = new PaygateClient(clientSettings(options.flags, env));
  const steps: Step[] = [];
  const note = (action: string, order: Payment | Payout) => {
    steps.push({ action, orderNo: order.orderNo, status: order.status });
    if (!options.json) process.stdout.write(`${action}: ${order.orderNo} (${order.merchantOrderNo}) ${order.status}\n`);
  };
  const merchantOrderNo = () => `trigger-${randomUUID().slice(0, 13)}`;
  const createPayment = (amount: string) =>
    client.payments.create({
      merchantOrderNo: merchantOrderNo(),
      currency: 'BRL',
      amount,
      paymentMethod: { code: 'PIX' },
      webhookUrl,
    });

  let final: Payment | Payout;
  let funding: string | undefined;
  if (event.startsWith('payment.')) {
    const payment = await createPayment(PAYMENT_AMOUNT);
    note('created payment', payment);
    if (event === 'payment.canceled') {
      final = await client.payments.cancel({ orderNo: payment.orderNo });
      note('canceled', final);
    } else {
      const status = event === 'payment.succeeded' ? 'SUCCEEDED' : event === 'payment.failed' ? 'FAILED' : 'EXPIRED';
      final = await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status });
      note(`simulated ${status}`, final);
    }
  } else {
    const input = {
      merchantOrderNo: merchantOrderNo(),
      currency: 'BRL',
      amount: PAYOUT_AMOUNT,
      webhookUrl,
      payee: PAYEE,
    };
    let payout: Payout;
    try {
      payout = await client.payouts.create(input);
    } catch (error) {
      if (!(error instanceof PaygateApiError) || error.msg !== 'INSUFFICIENT_BALANCE') throw error;
      // The balance is short: a succeeded payment funds it (its payment.succeeded goes to the same URL).
      const payment = await createPayment(FUNDING_AMOUNT);
      const paid = await client.sandbox.simulatePayment({ orderNo: payment.orderNo, status: 'SUCCEEDED' });
      funding = paid.orderNo;
      note('funded with payment', paid);
      payout = await client.payouts.create(input);
    }
    note('created payout', payout);
    note('confirmed', await client.payouts.confirm({ orderNo: payout.orderNo }));
    if (event === 'payout.failed') {
      final = await client.sandbox.simulatePayout({ orderNo: payout.orderNo, status: 'FAILED' });
      note('simulated FAILED', final);
    } else {
      final = await client.sandbox.simulatePayout({ orderNo: payout.orderNo, status: 'SUCCEEDED' });
      note('simulated SUCCEEDED', final);
      if (event === 'payout.refunded') {
        final = await client.sandbox.returnPayout({ orderNo: payout.orderNo });
        note('returned', final);
      }
    }
  }

  const result = {
    event,
    webhookUrl,
    orderNo: final.orderNo,
    merchantOrderNo: final.merchantOrderNo,
    status: final.status,
    ...(funding ? { fundingOrderNo: funding } : {}),
    steps,
  };
  if (options.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      `${event}: ${final.orderNo} is ${final.status}; the platform delivers its webhook to ${webhookUrl}` +
        `${funding ? ` (and the funding payment's payment.succeeded)` : ''}\n`,
    );
  }
  return 0;
}
