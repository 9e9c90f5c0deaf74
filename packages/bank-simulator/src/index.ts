export { createBank, type BankDeps, type BankSimulator, type ChannelSettings } from './app.js';
export { Bank, BankError, bankPaths, type BankPaths } from './bank.js';
export { ConfigError, DEFAULT_ACCOUNT, parseConfig, type Account, type BankConfig } from './config.js';
export {
  ensureHostKey,
  fingerprintOf,
  generateSshKeyPair,
  loadAuthorizedKey,
  type AuthorizedKey,
  type HostKey,
} from './keys.js';
export type * from './model.js';
export { virtualPath } from './sftp.js';
