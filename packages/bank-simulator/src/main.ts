import { runSimulator } from '@paygate/simulator-kit';
import { createBank } from './app.js';
import { parseConfig } from './config.js';

/** `npx paygate-bank`: parse config once, listen, print the host key and the channel, stop gracefully on SIGINT/SIGTERM. */
await runSimulator({
  name: 'paygate-bank',
  parseConfig,
  create: (config) => createBank(config),
  banner: (bank, config) => ({
    lines: [
      `paygate-bank: SFTP host key ${bank.hostKey.fingerprint} (ED25519), as ssh-keygen -lf ${config.dataDir}/ssh_host_ed25519_key.pub prints it`,
      `paygate-bank: the sepa-sftp channel for PAYGATE_CHANNELS (also in ${config.dataDir}/channel.json):`,
      JSON.stringify(bank.channel()),
    ],
    fields: {
      sftp: `sftp://${config.username}@${bank.channel().host}:${bank.sftpPort}`,
      sftpPort: bank.sftpPort,
      controlUrl: bank.controlUrl,
      dataDir: config.dataDir,
      hostKey: bank.hostKey.fingerprint,
      authorizedKey: bank.authorizedKey.fingerprint,
      username: config.username,
      bookAfterMs: config.bookAfterMs,
      booking: bank.store.mode,
    },
  }),
});
