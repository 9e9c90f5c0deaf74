// Bench only: a merchant's webhook receiver built as a merchant would build it, with the merchant
// SDK (`nodeWebhookHandler` around a `WebhookVerifier`): every delivery is verified (digest,
// event id, time window, keyid, Ed25519 signature) and parsed into a typed event before the
// 200; a refused one is answered 401 and counted. Reads WEBHOOK_KEYS (JSON [{keyid, publicKey}]);
// GET answers {verified, refused}.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeWebhookHandler, type WebhookKey, WebhookVerifier } from '@paygate/merchant';

const webhookKeys = JSON.parse(process.env.WEBHOOK_KEYS as string) as WebhookKey[];
let verified = 0;
let refused = 0;
const handle = nodeWebhookHandler({
  verifier: new WebhookVerifier({ webhookKeys }),
  onEvent: () => {
    verified++;
  },
  onError: () => {
    refused++;
  },
});

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.end(JSON.stringify({ verified, refused }));
    return;
  }
  void handle(req, res);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
// Exiting on SIGTERM (rather than being killed by it) lets --cpu-prof write its profile.
process.once('SIGTERM', () => process.exit(0));
