// Bench only: the real platform (startPlatform) on DATABASE_URL or PGlite, logging off.
import { parseConfig } from '../src/config.js';
import { startPlatform } from '../src/platform.js';

const config = parseConfig({
  ...process.env,
  PORT: '0',
  PAYGATE_WORKERS: 'false',
  LOG_LEVEL: 'silent',
  PAYGATE_RATE_LIMIT: '0',
});
const platform = await startPlatform(config, { logger: false });
process.stdout.write(`${JSON.stringify({ url: platform.url })}\n`);
