export * from './auth.js';
export { buildSimulator, type Simulator, type SimulatorDeps } from './app.js';
export { ConfigError, parseConfig, type SimulatorConfig } from './config.js';
export type * from './model.js';
export { Provider, ProviderError, SETTLEMENT_HEADER } from './provider.js';
