import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { success, writeError } from '../http/errors.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * The worker's own small HTTP listener: `GET /metrics` (Prometheus text: deliveries, attempt
 * latency, queue depth — the counters that only a worker moves when the API instances run
 * without workers) and `GET /healthz`. Anything else is a 404 in the platform's shape.
 */
export async function serveWorkerMetrics(
  metrics: Metrics,
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method === 'GET' && path === '/metrics') {
      metrics.registry.metrics().then(
        (text) => {
          response.writeHead(200, { 'content-type': metrics.registry.contentType });
          response.end(text);
        },
        () => writeError(response, 'SERVICE_UNAVAILABLE'),
      );
      return;
    }
    if (request.method !== 'GET' || path !== '/healthz') return writeError(response, 'NOT_FOUND');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(success({ status: 'ok' })));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
