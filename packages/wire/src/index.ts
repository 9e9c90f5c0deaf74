/**
 * The Paygate wire types: one zod schema per request, response and webhook body of the merchant
 * API. The server validates requests with them and generates the OpenAPI components from them;
 * the SDK and the portal take their TypeScript types from them (`import type`).
 *
 * @module
 */
export * from './common.js';
export * from './money.js';
export * from './openapi.js';
export * from './payments.js';
export * from './payouts.js';
export * from './portal.js';
export * from './queries.js';
export { component, components } from './registry.js';
export * from './webhooks.js';
