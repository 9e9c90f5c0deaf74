import { ResendEventRequest } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { success } from '../../http/errors.js';
import { businessBody, merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Services } from '../../services.js';
import { listQuery, parseInput, parseQuery } from '../../validation.js';

const eventsQuery = listQuery.extend({
  // Events carry the platform's order number (P… or W…).
  orderNo: z
    .string()
    .regex(/^[PW][0-9]{18}$/, 'a payment or payout order number')
    .optional(),
});

/** Merchant endpoints over the merchant's webhook events (signed like every request). */
export function eventRoutes(api: FastifyInstance, { webhooks }: Services): void {
  api.get('/events', async (request) => {
    const filters = parseInput(
      eventsQuery,
      parseQuery(rawTarget(request).query, ['orderNo', 'status', 'from', 'to', 'pageSize', 'cursor']),
    );
    return success(await webhooks.list(merchantOf(request).id, filters));
  });

  api.post('/events/resend', async (request) => {
    const { eventId } = parseInput(ResendEventRequest, businessBody(request));
    return success(await webhooks.resend(eventId, merchantOf(request).id));
  });
}
