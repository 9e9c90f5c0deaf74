import { EventListQuery, ResendEventRequest } from '@paygate/wire';
import type { FastifyInstance } from 'fastify';
import { success } from '../../http/errors.js';
import { businessBody, merchantOf, rawTarget } from '../../http/merchant-api.js';
import type { Webhooks } from './service.js';
import { parseInput, parseQuery } from '../../validation.js';

/** Merchant endpoints over the merchant's webhook events (signed like every request). */
export function eventRoutes(api: FastifyInstance, { webhooks }: { readonly webhooks: Webhooks }): void {
  api.get('/events', async (request) => {
    const filters = parseInput(EventListQuery, parseQuery(rawTarget(request).query, Object.keys(EventListQuery.shape)));
    return success(await webhooks.list(merchantOf(request).id, filters));
  });

  api.post('/events/resend', async (request) => {
    const { eventId } = parseInput(ResendEventRequest, businessBody(request));
    return success(await webhooks.resend(eventId, merchantOf(request).id));
  });
}
