import type { FastifyInstance } from 'fastify';
import { rawTarget } from '../../http/merchant-api.js';
import type { Services } from '../../services.js';
import { listNotifications, receiveNotification } from './notifications.js';

/** Notification bodies are small JSON documents; anything larger is not one. */
const MAX_NOTIFICATION_BYTES = 64 * 1024;

/**
 * `POST /channels/{name}/notifications`: where channels report order changes. Outside the
 * merchant API's authentication: each channel authenticates its own notifications (the
 * connector's `verifyNotification`), over the exact body bytes received.
 */
export function channelRoutes(app: FastifyInstance, services: Services): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_NOTIFICATION_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  app.post('/channels/:name/notifications', async (request, reply) => {
    const { name } = request.params as { name: string };
    const connector = services.channels.get(name);
    if (!connector) return reply.code(404).send({ msg: 'NOT_FOUND', message: 'no such channel' });
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const { path, query } = rawTarget(request);
    const result = await receiveNotification(services, connector, {
      method: request.raw.method ?? 'POST',
      path: query === undefined ? path : `${path}?${query}`,
      headers: request.headers,
      body,
    });
    if (result.status !== 200) {
      request.log.info({ channel: name, reason: result.reason }, 'channel notification refused');
      return result.status === 401
        ? reply.code(401).send({ msg: 'UNAUTHORIZED' })
        : reply.code(400).send({ msg: 'VALIDATION_FAILED', message: result.reason });
    }
    return reply.code(200).send({ msg: 'SUCCESS', data: { outcome: result.outcome } });
  });
}

/**
 * `GET /admin/v1/channels/{name}/notifications` (operator API, `paygate channels notifications`):
 * the channel's newest 100 notifications as received, with what applying them did.
 */
export function channelAdminRoutes(admin: FastifyInstance, services: Services): void {
  admin.get('/channels/:name/notifications', async (request, reply) => {
    const { name } = request.params as { name: string };
    if (!services.channels.get(name)) return reply.code(404).send({ msg: 'NOT_FOUND', message: 'no such channel' });
    return { msg: 'SUCCESS', data: await listNotifications(services, name) };
  });
}
