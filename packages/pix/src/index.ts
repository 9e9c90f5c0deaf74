/**
 * `@paygate/pix`: the Banco Central do Brasil's API Pix as zod schemas (the shapes a receiving
 * platform and its Pix provider exchange) and the EMV BR Code ("Pix Copia e Cola") builder and
 * reader. Used by the platform's `pix-api` connector and by the `paygate-pix` simulator.
 *
 * @module
 */
export * from './br-code.js';
export * from './schemas.js';
