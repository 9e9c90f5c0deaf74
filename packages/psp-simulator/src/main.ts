import { runSimulator } from '@paygate/simulator-kit';
import { buildSimulator } from './app.js';
import { parseConfig } from './config.js';

/** `npx paygate-psp`: parse config once, listen, and stop gracefully on SIGINT/SIGTERM (the kit's start-up). */
await runSimulator({
  name: 'paygate-psp',
  parseConfig,
  create: (config) => buildSimulator(config),
  banner: (simulator, config) => ({
    fields: {
      url: simulator.url,
      dataDir: config.dataDir,
      autoCompleteMs: config.autoCompleteMs,
      mode: simulator.store.mode.mode,
    },
  }),
});
