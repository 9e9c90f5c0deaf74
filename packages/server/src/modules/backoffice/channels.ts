/**
 * Channels in the back office: each configured channel's health, from what the platform did with
 * it: its exchanges of the last 24 hours (calls, errors, error rate, the last success and error),
 * what polling waits for there (open orders, how many are due, the next poll), its last
 * notification, and for a file channel the files the bank has said nothing of yet.
 */
import { exchangeHealth } from '../channels/exchanges.js';
import { listNotifications } from '../channels/notifications.js';
import { listSepaFiles } from '../channels/sepa-sftp/files.js';
import { isSepaSftp } from '../channels/sepa-sftp/sepa-sftp.js';
import type { ChannelServices } from '../channels/apply.js';
import type { Payments } from '../payments/service.js';
import type { Payouts } from '../payouts/service.js';

const WINDOW_MS = 86_400_000;

export async function channelHealth(
  services: ChannelServices & {
    readonly payments: Pick<Payments, 'pollBacklog'>;
    readonly payouts: Pick<Payouts, 'pollBacklog'>;
    readonly now: () => number;
  },
) {
  const since = services.now() - WINDOW_MS;
  return Promise.all(
    services.channels.list().map(async (connector) => {
      const [calls, payments, payouts, notifications] = await Promise.all([
        exchangeHealth(services.db, connector.name, since),
        services.payments.pollBacklog(connector.name),
        services.payouts.pollBacklog(connector.name),
        listNotifications(services, connector.name, 1),
      ]);
      const files = isSepaSftp(connector) ? await listSepaFiles(services.db, connector.name) : undefined;
      return {
        name: connector.name,
        kind: connector.kind,
        methods: connector.methods,
        payouts: connector.payouts,
        exchanges: {
          since,
          ...calls,
          errorRate: calls.calls === 0 ? 0 : calls.errors / calls.calls,
        },
        polling: { payments, payouts },
        lastNotificationAt: notifications[0]?.receivedAt ?? null,
        ...(files === undefined
          ? {}
          : {
              files: {
                unacknowledged: files.sent.filter((file) => file.state === 'uploaded').length,
                setAside: files.received.filter((file) => file.state === 'set_aside').length,
              },
            }),
      };
    }),
  );
}
