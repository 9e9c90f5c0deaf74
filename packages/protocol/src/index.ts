/**
 * The Paygate wire protocol: RFC 9421 HTTP Message Signatures with Ed25519, RFC 9530
 * Content-Digest, the libsodium sealed-box envelope, and webhook signing. Pure: no I/O, no
 * environment; clock and nonces are passed in.
 *
 * @packageDocumentation
 */
export * from './base64.js';
export * from './constants.js';
export * from './digest.js';
export * from './envelope.js';
export * from './headers.js';
export * from './keys.js';
export * from './request.js';
export * from './result.js';
export * from './signature-base.js';
export * from './signature-input.js';
export * from './signature.js';
export * from './webhook.js';
export { cryptoImplementation } from './sodium.js';
