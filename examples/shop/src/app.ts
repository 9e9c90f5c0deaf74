import {
  type OrderUpdate,
  PaygateApiError,
  type PaygateClient,
  PaygateNetworkError,
  SqlInboxStore,
  type SqlClient,
  WebhookInbox,
  type WebhookVerifier,
} from '@paygate/merchant';
import { expressWebhook } from '@paygate/merchant/express';
import express, { type Express, type Response } from 'express';
import { PRODUCTS, type ShopOrder, ShopOrders } from './orders.js';
import { errorPage, homePage, orderPage } from './pages.js';

/** What the shop is built from; `main.ts` makes these from the environment, tests from a test platform. */
export interface ShopDeps {
  /** The Paygate API client (the merchant's access key, private key and the platform body key). */
  readonly client: PaygateClient;
  /** Verifies Paygate webhooks (the platform webhook keys). */
  readonly verifier: WebhookVerifier;
  /** The shop's database: orders, and the webhook inbox's tables. */
  readonly db: SqlClient;
  /** Where the platform reaches this shop (the base of the webhookUrl), e.g. http://127.0.0.1:3000. */
  readonly publicUrl: string;
  /** Told about refused webhooks and failures (default: stderr). */
  readonly onError?: (error: unknown) => void;
}

export interface Shop {
  readonly app: Express;
  readonly orders: ShopOrders;
  readonly inbox: WebhookInbox;
}

/**
 * The shop: a product page, orders that become Paygate payments (the payer is sent to the
 * cashier page), and a webhook route that verifies deliveries and applies them through the
 * SDK's inbox (deduplicated by eventId, idempotent per order, conflicts confirmed by a query).
 */
export async function createShop(deps: ShopDeps): Promise<Shop> {
  const orders = new ShopOrders(deps.db);
  await orders.migrate();
  const store = new SqlInboxStore(deps.db);
  await store.migrate();
  const inbox = new WebhookInbox({
    store,
    client: deps.client,
    onUpdate: (update: OrderUpdate) => orders.applyUpdate(update),
  });
  const onError =
    deps.onError ?? ((error: unknown) => console.error(`[shop] ${error instanceof Error ? error.message : error}`));

  const app = express();
  // The webhook route first: it reads the raw body itself, before any body parser could.
  app.post(
    '/webhook/payment',
    expressWebhook({ verifier: deps.verifier, onEvent: (event) => inbox.process(event), onError }),
  );
  app.use(express.urlencoded({ extended: false, limit: '4kb' }));

  /** Creates (or, on a retry, finds) the order's payment and sends the payer to the cashier. */
  const pay = async (order: ShopOrder, res: Response) => {
    try {
      // Safe to repeat: the platform deduplicates creates by merchantOrderNo.
      const payment = await deps.client.payments.create({
        merchantOrderNo: order.id,
        currency: order.currency,
        amount: order.amount,
        paymentMethod: { code: order.method },
        webhookUrl: `${deps.publicUrl}/webhook/payment`,
        attach: `product=${order.productId}`,
      });
      await orders.attachPayment(order.id, payment);
      // Only PENDING is recorded: a final status learned here (Pay pressed again after the payer
      // paid) is left to its webhook, which applies it to the order; recorded now, it would make
      // that webhook a no-op and leave the order PENDING.
      if (payment.status === 'PENDING') {
        await inbox.recordStatus(
          { orderType: 'PAYMENT', orderNo: payment.orderNo, merchantOrderNo: order.id },
          payment.status,
        );
      }
      res.redirect(303, payment.cashierUrl);
    } catch (error) {
      onError(error);
      const reason =
        error instanceof PaygateApiError
          ? `Paygate refused the payment: ${error.msg}${error.requestId ? ` (request ${error.requestId})` : ''}.`
          : error instanceof PaygateNetworkError
            ? 'Paygate could not be reached. Try again in a moment.'
            : 'Something went wrong.';
      const { status, html } = errorPage('Payment not started', reason);
      res.status(status).type('html').send(html);
    }
  };

  app.get('/', async (_req, res) => {
    res.type('html').send(homePage(await orders.latest()));
  });

  app.post('/orders', async (req, res) => {
    const product = PRODUCTS.find((p) => p.id === (req.body as Record<string, unknown> | undefined)?.product);
    if (!product) {
      const { status, html } = errorPage('Unknown product', 'Choose a product on the shop page.', 400);
      res.status(status).type('html').send(html);
      return;
    }
    await pay(await orders.create(product), res);
  });

  app.post('/orders/:id/pay', async (req, res) => {
    const order = await orders.get(req.params.id);
    if (!order)
      return void res
        .status(404)
        .type('html')
        .send(errorPage('No such order', req.params.id, 404).html);
    await pay(order, res);
  });

  app.get('/orders/:id', async (req, res) => {
    const order = await orders.get(req.params.id);
    if (!order)
      return void res
        .status(404)
        .type('html')
        .send(errorPage('No such order', req.params.id, 404).html);
    res.type('html').send(orderPage(order));
  });

  app.get('/api/orders/:id', async (req, res) => {
    const order = await orders.get(req.params.id);
    if (!order) return void res.status(404).json({ error: 'NOT_FOUND' });
    res.json(order);
  });

  return { app, orders, inbox };
}
