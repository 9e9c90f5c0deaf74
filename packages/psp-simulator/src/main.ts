import { DirectoryInUseError } from '@paygate/dir-lock';
import { buildSimulator } from './app.js';
import { ConfigError, parseConfig } from './config.js';

/** `npx paygate-psp`: parse config once, listen, and stop gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const simulator = buildSimulator(config);
  const url = await simulator.listen();
  simulator.log.info(
    { url, dataDir: config.dataDir, autoCompleteMs: config.autoCompleteMs, mode: simulator.store.mode.mode },
    'paygate-psp listening',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    simulator.log.info({ signal }, 'shutting down');
    try {
      await simulator.close();
      simulator.log.info('stopped');
      process.exit(0);
    } catch (error) {
      simulator.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  const oneLine = error instanceof ConfigError || error instanceof DirectoryInUseError;
  console.error(oneLine ? `paygate-psp: ${error.message}` : error);
  process.exit(1);
});
