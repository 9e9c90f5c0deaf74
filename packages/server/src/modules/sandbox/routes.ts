import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { businessBody, merchantOf } from '../../http/merchant-api.js';
import type { Payments } from '../payments/service.js';
import { sandboxPayoutRoutes } from '../payouts/routes.js';
import type { Payouts } from '../payouts/service.js';
import type { Webhooks } from '../webhooks/service.js';

/**
 * Sandbox test helpers: they act as the channel would, or check the merchant's receiver. Registered only in the sandbox; in
 * production these paths are 404 like any unknown endpoint.
 */
export function sandboxRoutes(
  api: FastifyInstance,
  services: { readonly payments: Payments; readonly payouts: Payouts; readonly webhooks: Webhooks },
): void {
  const { payments } = services;
  api.post('/sandbox/payments/simulate', async (request) =>
    success(await payments.applyChannelReport(merchantOf(request).id, businessBody(request))),
  );
  sandboxPayoutRoutes(api, services);
  api.post('/sandbox/webhooks/check', async (request) =>
    success(await services.webhooks.checkReceiver(businessBody(request))),
  );
}
