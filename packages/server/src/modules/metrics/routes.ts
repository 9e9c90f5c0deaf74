import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

/** Prometheus text exposition of the process's metrics. */
export function metricsRoutes(app: FastifyInstance, { metrics }: Services): void {
  app.get('/metrics', async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
