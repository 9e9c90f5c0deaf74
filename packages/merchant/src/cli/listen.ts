import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { WebhookVerificationError } from '../errors.js';
import { answerWebhook, incomingFromNode, writeAnswer } from '../http.js';
import { WebhookVerifier } from '../webhook.js';
import { CliError, type ConfigFlags, webhookKeys } from './config.js';
import { selfSignedCertificate } from './self-signed.js';
import { describeEvent, describeFailure } from './verify.js';

/** Where `listen --https` keeps its certificate unless `--tls-dir` says otherwise. */
export const DEFAULT_TLS_DIR = 'merchant-tls';

/**
 * The receiver's certificate and key in `dir` (`cert.pem`, `key.pem`): made once, self-signed
 * for the loopback names and `host`, and reused by every later `listen --https` on that folder,
 * so that the platform trusting it (`PAYGATE_WEBHOOK_EXTRA_CA=dir/cert.pem`) keeps trusting it.
 */
export function receiverCertificate(dir: string, host: string): { cert: string; key: string; certFile: string } {
  const certFile = resolve(dir, 'cert.pem');
  const keyFile = resolve(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const made = selfSignedCertificate(['127.0.0.1', '::1', 'localhost', host]);
    writeFileSync(keyFile, made.key, { mode: 0o600 });
    writeFileSync(certFile, made.cert, { mode: 0o644 });
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}

/**
 * `listen`: a local webhook receiver. Every POST is verified and pretty-printed; verified ones
 * are answered 200, refused ones 401 (so the platform retries them). With `save`, each delivery
 * is also written as `webhook-N.http` (request line and headers) and `webhook-N.body`, which
 * `verify-webhook` reads. With `https`, it serves TLS with a self-signed certificate kept in
 * `tlsDir` (made on first use) and prints its SHA-256 fingerprint. The webhook keys are read when
 * it starts, or, when the onboarding file is not there yet (a receiver started before the
 * merchant is created), at the first webhook. Runs until interrupted.
 */
export async function listen(
  options: {
    port: number;
    host: string;
    save?: string | undefined;
    https?: boolean;
    tlsDir?: string | undefined;
    flags: ConfigFlags;
  },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  let verifier: WebhookVerifier | undefined;
  const verifierNow = () => (verifier ??= new WebhookVerifier({ webhookKeys: webhookKeys(options.flags, env) }));
  try {
    verifierNow();
  } catch (error) {
    const onboarding = options.flags.onboarding ?? env.PAYGATE_ONBOARDING;
    // Only a missing onboarding file waits: any other mistake in the configuration is said now.
    if (!(error instanceof CliError) || !onboarding || existsSync(onboarding)) throw error;
    process.stdout.write(`webhook keys: ${onboarding} is not there yet; it is read at the first webhook\n`);
  }
  if (options.save) mkdirSync(options.save, { recursive: true });
  let count = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const n = ++count;
    let current: WebhookVerifier;
    try {
      current = verifierNow();
    } catch (error) {
      process.stdout.write(`#${n} ${req.method} ${req.url} not verified: ${(error as Error).message}\n`);
      res.writeHead(503, { 'content-type': 'text/plain' }).end('the receiver has no webhook keys yet\n');
      return;
    }
    const answer = await answerWebhook(
      {
        verifier: current,
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
  };
  const tls = options.https ? receiverCertificate(options.tlsDir ?? DEFAULT_TLS_DIR, options.host) : undefined;
  const server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => void handle(req, res))
    : createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const scheme = tls ? 'https' : 'http';
  if (tls) {
    process.stdout.write(
      `certificate ${tls.certFile} (self-signed), SHA-256 fingerprint ${new X509Certificate(tls.cert).fingerprint256}\n` +
        `the platform trusts it with PAYGATE_WEBHOOK_EXTRA_CA=${tls.certFile}\n`,
    );
  }
  process.stdout.write(
    `listening on ${scheme}://${options.host}:${port} — use it (with any path) as the webhookUrl; Ctrl-C stops\n`,
  );
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
