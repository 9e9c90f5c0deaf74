// Bench only: the merchant-API scope (raw body, verification, envelope opening) over in-memory
// lookups, answering without touching storage. Its throughput is the ceiling the real server is
// compared with. Reads PUBLIC_KEY (merchant, base64), BODY_SECRET (X25519, base64), ACCESS_KEY,
// ANSWERS (JSON: the data each GET path answers).
import { boxKeyPairFrom } from '@paygate/protocol';
import Fastify from 'fastify';
import { errorHandler, success } from '../src/http/errors.js';
import { businessBody, merchantApiScope } from '../src/http/merchant-api.js';
import type { Services } from '../src/services.js';
import { RequestNonce } from '../src/db/request-nonce.js';

const publicKey = Buffer.from(process.env.PUBLIC_KEY as string, 'base64');
const bodyKey = boxKeyPairFrom(Buffer.from(process.env.BODY_SECRET as string, 'base64'));
if (!bodyKey.ok) throw new Error('bad BODY_SECRET');
const merchant = {
  id: 1n,
  name: 'bench',
  environment: 'sandbox' as const,
  accessKey: process.env.ACCESS_KEY as string,
  publicKeys: [publicKey],
};
const nonces = new Set<string>();
const consume = async (nonce: string) => {
  if (nonces.has(nonce)) return false;
  nonces.add(nonce);
  return true;
};
/** What each GET answers, by path under /api/v1 (see startCeiling). */
const answers = JSON.parse(process.env.ANSWERS ?? '{}') as Record<string, unknown>;

const services = {
  config: { environment: 'production', rateLimitPerSecond: 0 },
  now: Date.now,
  merchants: {
    findByAccessKey: async (accessKey: string) => (accessKey === merchant.accessKey ? merchant : undefined),
  },
  nonces: {
    consume: async (_id: bigint, nonce: string) => consume(nonce),
    // Recorded in memory before the route (the ceiling's routes take no `config.nonce`).
    pending: (id: bigint, nonce: string, expires: number) =>
      new RequestNonce(id, nonce.toLowerCase(), new Date(expires * 1000), {
        alone: (use) => consume(use.nonce),
        statement: { name: 'unused', text: '' },
        params: () => [],
        literal: () => '',
      }),
  },
  platformKeys: { bodyKeyPair: async () => bodyKey.value },
} as unknown as Services;

const app = Fastify({ logger: false });
app.setErrorHandler(errorHandler);
await app.register(
  async (api) =>
    merchantApiScope(api, services, (scope) => {
      scope.post('/payments', async (request) => success(businessBody(request)));
      for (const path of new Set(['/payments', ...Object.keys(answers)])) {
        const data = answers[path] ?? {};
        scope.get(path, async () => success(data));
      }
    }),
  { prefix: '/api/v1' },
);
// SIGTERM exits through process.exit, so that --cpu-prof (BENCH_CPU_PROF) writes the profile.
process.once('SIGTERM', () => process.exit(0));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: address })}\n`);
