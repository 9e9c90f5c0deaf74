import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryObserver } from '../webhooks/service.js';

/** The platform's Prometheus metrics, one registry per process (served at /metrics). */
export class Metrics implements DeliveryObserver {
  readonly registry = new Registry();
  private readonly deliveries = new Counter({
    name: 'paygate_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'paygate_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(queue: () => Promise<{ pending: number; oldestPendingAgeSeconds: number }>) {
    // Queue gauges are read from the database when scraped, so every instance reports the shared queue.
    let last: Promise<{ pending: number; oldestPendingAgeSeconds: number }> | undefined;
    const read = () => (last ??= queue().finally(() => setTimeout(() => (last = undefined), 0)));
    new Gauge({
      name: 'paygate_webhook_queue_depth',
      help: 'Webhook events waiting for delivery',
      registers: [this.registry],
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: 'paygate_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest webhook event still waiting for delivery',
      registers: [this.registry],
      async collect() {
        this.set((await read()).oldestPendingAgeSeconds);
      },
    });
  }

  attempt(outcome: 'delivered' | 'retry' | 'failed', latencyMs: number): void {
    this.deliveries.inc({ outcome });
    this.latency.observe(latencyMs / 1000);
  }
}
