import { runSimulator } from '@paygate/simulator-kit';
import { createSimulator } from './app.js';
import { parseConfig } from './config.js';

/** `npx paygate-pix`: parse config once, listen, print the channel settings, stop gracefully on SIGINT/SIGTERM. */
await runSimulator({
  name: 'paygate-pix',
  parseConfig,
  create: (config) => createSimulator(config),
  banner: (simulator, config) => {
    const channel = simulator.channel();
    return {
      // The snippet carries the client secret: printed for the developer, kept out of the JSON log.
      lines: [
        `paygate-pix: the pix-api channel for PAYGATE_CHANNELS (also in ${config.dataDir}/channel.json):`,
        JSON.stringify(channel),
      ],
      fields: {
        url: simulator.url,
        controlUrl: simulator.controlUrl,
        dataDir: config.dataDir,
        pixKey: channel.pixKey,
        clientId: channel.clientId,
        notifications: simulator.store.mode,
      },
    };
  },
});
