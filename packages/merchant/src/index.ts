/**
 * The Paygate merchant SDK, a thin layer over `@paygate/protocol`:
 *
 * - {@link PaygateClient}: a typed method for every merchant API endpoint; each attempt signed
 *   afresh (and sealed, for writes); retries on network errors and 5xx only; typed errors.
 * - {@link WebhookVerifier}: webhook verification from the raw bytes, returning a typed
 *   {@link WebhookEvent}; {@link nodeWebhookHandler} for `node:http` (and
 *   `@paygate/merchant/express`, `@paygate/merchant/fastify`).
 * - {@link WebhookInbox}: deduplication by eventId, idempotent status updates per order, and
 *   conflicts settled through the query API; stores in memory or SQL.
 *
 * @packageDocumentation
 */
export * from './client.js';
export * from './config.js';
export * from './errors.js';
export * from './events.js';
export * from './http.js';
export * from './inbox/inbox.js';
export * from './inbox/sql-store.js';
export * from './inbox/store.js';
export * from './published-keys.js';
export * from './types.js';
export * from './webhook.js';
