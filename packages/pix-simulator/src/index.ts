export { createSimulator, type Availability, type ChannelSettings, type Simulator, type SimulatorDeps } from './app.js';
export { ensureCertificates, tlsFiles, type TlsFiles } from './certs.js';
export { ConfigError, parseConfig, type SimulatorConfig } from './config.js';
export { DataDirLockedError, lockDataDir, type DataDirLock } from './lock.js';
export type * from './model.js';
export { ControlError, PixProvider } from './provider.js';
