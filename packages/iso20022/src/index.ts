/**
 * `@paygate/iso20022`: SEPA Credit Transfers as the ISO 20022 files a bank exchanges with its
 * business customers: `pain.001.001.09` written (EPC132-08 2023, SCT customer-to-PSP) and read,
 * `pain.002` status reports, `camt.054` notifications and `camt.053` statements read and written, ISO 11649 creditor references and the EPC's SEPA credit transfer QR code, and XSD validation
 * against the published schemas in `xsd/`. Used by the platform's `sepa-sftp` connector and by the
 * `paygate-bank` simulator, so both sides hold the same shapes.
 *
 * @module
 */
export * from './text.js';
export * from './pain001.js';
export * from './pain002.js';
export * from './camt.js';
export * from './camt054.js';
export * from './camt053.js';
export * from './creditor-reference.js';
export * from './epc-qr.js';
export * from './bank-file.js';
export * from './validate.js';
export { ReadError, oneLine } from './xml.js';
