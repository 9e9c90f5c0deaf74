import { createSimulator } from './app.js';
import { ConfigError, parseConfig } from './config.js';
import { DataDirLockedError } from './lock.js';

/** `npx paygate-pix`: parse config once, listen, print the channel settings, stop gracefully on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const simulator = await createSimulator(config);
  await simulator.listen();
  const channel = simulator.channel();
  // The snippet carries the client secret: printed for the developer, kept out of the JSON log.
  console.log(`paygate-pix: the pix-api channel for PAYGATE_CHANNELS (also in ${config.dataDir}/channel.json):`);
  console.log(JSON.stringify(channel));
  simulator.log.info(
    {
      url: simulator.url,
      controlUrl: simulator.controlUrl,
      dataDir: config.dataDir,
      pixKey: channel.pixKey,
      clientId: channel.clientId,
      notifications: simulator.store.mode,
    },
    'paygate-pix listening',
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
  console.error(
    error instanceof ConfigError || error instanceof DataDirLockedError ? `paygate-pix: ${error.message}` : error,
  );
  process.exit(1);
});
