import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import type { PlatformKeys } from './service.js';

/** Public, unauthenticated: the webhook keys a merchant may see signatures from, by keyid. */
export function publishedKeyRoutes(
  app: FastifyInstance,
  {
    platformKeys,
    config,
  }: {
    readonly platformKeys: PlatformKeys;
    readonly config: Config;
  },
): void {
  app.get('/.well-known/paygate/webhook-keys', async (_request, reply) => {
    const keys = await platformKeys.publishedWebhookKeys();
    return reply.header('cache-control', 'public, max-age=300').send({
      environment: config.environment,
      keys: keys.map((key) => ({ keyid: key.keyId, publicKey: key.publicKey, status: key.status })),
    });
  });
}
