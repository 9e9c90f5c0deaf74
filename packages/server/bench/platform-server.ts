// Bench only: the real platform (startPlatform) on DATABASE_URL or PGlite, logging off; workers
// only when PAYGATE_WORKERS says so. SIGTERM closes it and exits, so that --cpu-prof writes its
// profile and the embedded database is closed cleanly.
import { parseConfig } from '../src/config.js';
import { startPlatform } from '../src/platform.js';

const config = parseConfig({
  PAYGATE_WORKERS: 'false',
  ...process.env,
  PORT: '0',
  LOG_LEVEL: 'silent',
  PAYGATE_RATE_LIMIT: '0',
});
const platform = await startPlatform(config, { logger: false });
process.once('SIGTERM', () => {
  void platform.close().finally(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: platform.url })}\n`);
