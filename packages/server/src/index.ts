/** The Paygate platform, as a library: for tests, the worker process and embedding. */
export { buildApp } from './app.js';
export { type Config, parseConfig } from './config.js';
export { type Db, openDatabase } from './db/db.js';
export { migrate } from './db/migrate.js';
export { type Platform, startPlatform } from './platform.js';
export { createServices, type Services } from './services.js';
