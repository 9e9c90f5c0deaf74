import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../observability/metrics.js';

/** Prometheus text exposition of the process's metrics. */
export function metricsRoutes(app: FastifyInstance, { metrics }: { readonly metrics: Metrics }): void {
  app.get('/metrics', async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
