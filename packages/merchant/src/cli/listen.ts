import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebhookVerificationError } from '../errors.js';
import { answerWebhook, incomingFromNode, writeAnswer } from '../http.js';
import { WebhookVerifier } from '../webhook.js';
import { type ConfigFlags, webhookKeys } from './config.js';
import { describeEvent, describeFailure } from './verify.js';

/**
 * `listen`: a local webhook receiver. Every POST is verified and pretty-printed; verified ones
 * are answered 200, refused ones 401 (so the platform retries them). With `save`, each delivery
 * is also written as `webhook-N.http` (request line and headers) and `webhook-N.body`, which
 * `verify-webhook` reads. Runs until interrupted.
 */
export async function listen(
  options: { port: number; host: string; save?: string | undefined; flags: ConfigFlags },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const verifier = new WebhookVerifier({ webhookKeys: webhookKeys(options.flags, env) });
  if (options.save) mkdirSync(options.save, { recursive: true });
  let count = 0;
  const server = createServer(async (req, res) => {
    const n = ++count;
    const answer = await answerWebhook(
      {
        verifier,
        onEvent: (event) => {
          process.stdout.write(`#${n} verified ${describeEvent(event)}\n${JSON.stringify(event, null, 2)}\n`);
        },
        onError: (error) => {
          const text = error instanceof WebhookVerificationError ? describeFailure(error) : String(error);
          process.stdout.write(`#${n} ${req.method} ${req.url} ${text}\n`);
        },
      },
      async () => {
        const incoming = await incomingFromNode(req);
        if (options.save) {
          const head = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
          for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
            head.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
          writeFileSync(join(options.save, `webhook-${n}.http`), `${head.join('\r\n')}\r\n\r\n`);
          writeFileSync(join(options.save, `webhook-${n}.body`), incoming.body);
        }
        return incoming;
      },
    );
    writeAnswer(res, answer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  process.stdout.write(
    `listening on http://${options.host}:${port} — use it (with any path) as the webhookUrl; Ctrl-C stops\n`,
  );
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
