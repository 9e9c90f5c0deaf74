import type { FastifyInstance } from 'fastify';
import { orderNoOf } from '@paygate/wire';
import { z } from 'zod';
import { DomainError, unauthorized } from '../../errors.js';
import { success } from '../../http/errors.js';
import { rawTarget } from '../../http/merchant-api.js';
import { parseInput } from '../../validation.js';
import type { ChannelServices } from './apply.js';
import { listNotifications, receiveNotification, recordHint, settleHint } from './notifications.js';
import { configuredChannels, syncOrder } from './polling.js';
import { listSepaCredits, listSepaFiles } from './sepa-sftp/files.js';
import { sepaChannelHealth } from './sepa-sftp/health.js';
import { isSepaSftp } from './sepa-sftp/sepa-sftp.js';

const noSuchChannel = () => new DomainError('NOT_FOUND', 'no such channel');

/** Notification bodies are small JSON documents; anything larger is not one. */
const MAX_NOTIFICATION_BYTES = 64 * 1024;

/**
 * `POST /channels/{name}/notifications`: where channels report order changes. Outside the
 * merchant API's authentication: each channel authenticates its own notifications (the
 * connector's `verifyNotification`), over the exact body bytes received.
 */
export function channelRoutes(app: FastifyInstance, services: ChannelServices): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_NOTIFICATION_BYTES }, (_request, body, done) =>
    done(null, body),
  );
  app.post('/channels/:name/notifications', async (request) => {
    const { name } = request.params as { name: string };
    const connector = services.channels.get(name);
    if (!connector) throw noSuchChannel();
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const { path, query } = rawTarget(request);
    const result = await receiveNotification(services, connector, {
      method: request.raw.method ?? 'POST',
      path: query === undefined ? path : `${path}?${query}`,
      headers: request.headers,
      body,
    });
    if (!result.ok) {
      request.log.info({ channel: name, reason: result.reason }, 'channel notification refused');
      // Authentication failures are the bare 401, as everywhere; the reason goes to the log only.
      throw result.code === 'UNAUTHORIZED' ? unauthorized() : new DomainError(result.code, result.reason);
    }
    return success({ outcome: result.outcome });
  });
  // The API Pix callback (`{webhookUrl}/pix`): a hint with no signature of its own (the provider's
  // mTLS ends at the deployment's edge). Answered once recorded; what settles an order is the
  // provider's answer to `GET /cob/{txid}`, asked after the answer (polling catches any loss).
  app.post('/channels/:name/notifications/pix', async (request) => {
    const { name } = request.params as { name: string };
    const connector = services.channels.get(name);
    if (!connector?.readHint) throw noSuchChannel();
    const { path, query } = rawTarget(request);
    const receipt = await recordHint(services, connector, {
      method: request.raw.method ?? 'POST',
      path: query === undefined ? path : `${path}?${query}`,
      headers: request.headers,
      body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    });
    if (!receipt.ok) {
      request.log.info({ channel: name, reason: receipt.reason }, 'channel callback refused');
      throw new DomainError('VALIDATION_FAILED', receipt.reason);
    }
    settleHint(services, connector, receipt).catch((error: unknown) =>
      request.log.error({ err: error, channel: name }, 'settling a channel callback failed; polling settles it'),
    );
    return success({ outcome: 'received' });
  });
}

/** GET /admin/v1/channels/credits?state=unmatched|all */
const creditsQuery = z.strictObject({ state: z.enum(['unmatched', 'all']).optional() });
const creditsOptions = (query: unknown) => ({ all: parseInput(creditsQuery, query ?? {}).state === 'all' });

/** POST /admin/v1/channels/sync */
const syncInput = z.strictObject({ orderNo: z.union([orderNoOf('P'), orderNoOf('W')]) });

/**
 * The operator API's channel routes:
 * - `GET /admin/v1/channels/{name}/notifications` (`paygate channels notifications`): the
 *   channel's newest 100 notifications as received, with what applying them did;
 * - `POST /admin/v1/channels/sync` (`paygate channels sync`): asks an order's channel about it
 *   now and applies the answer (polling.ts, syncOrder);
 * - `GET /admin/v1/channels/files`, `GET /admin/v1/channels/{name}/files` (`paygate channels files`): the files the
 *   sepa-sftp channels sent (built, uploaded, acknowledged, with the bank's statuses) and received (applied, set
 *   aside), and the batch bookings read (applied, or mismatched: kept for the operator);
 * - `GET /admin/v1/channels/credits[?state=all]`, `GET /admin/v1/channels/{name}/credits` (`paygate channels
 *   credits`): the credit transfers received on a sepa-sftp channel's account that matched no payment (all of
 *   them with `state=all`), newest first;
 * - `GET /admin/v1/channels/health` (`paygate channels health`): each channel, and for sepa-sftp its open batch and
 *   when it closes, the bank's next cut-off, files waiting upload or an answer, the last file read, unmatched
 *   credits and mismatched batches.
 */
export function channelAdminRoutes(admin: FastifyInstance, services: ChannelServices): void {
  admin.get('/channels/:name/notifications', async (request) => {
    const { name } = request.params as { name: string };
    if (!services.channels.get(name)) throw noSuchChannel();
    return success(await listNotifications(services, name));
  });
  admin.get('/channels/files', async () => success(await listSepaFiles(services.db, undefined)));
  admin.get('/channels/:name/files', async (request) => {
    const { name } = request.params as { name: string };
    const connector = services.channels.get(name);
    if (!connector || !isSepaSftp(connector)) throw noSuchChannel();
    return success(await listSepaFiles(services.db, name));
  });
  admin.get('/channels/credits', async (request) =>
    success({ credits: await listSepaCredits(services.db, undefined, creditsOptions(request.query)) }),
  );
  admin.get('/channels/:name/credits', async (request) => {
    const { name } = request.params as { name: string };
    const connector = services.channels.get(name);
    if (!connector || !isSepaSftp(connector)) throw noSuchChannel();
    return success({ credits: await listSepaCredits(services.db, name, creditsOptions(request.query)) });
  });
  admin.get('/channels/health', async () => {
    const channels = [];
    for (const connector of services.channels.list()) {
      channels.push(
        isSepaSftp(connector)
          ? await sepaChannelHealth(services, connector)
          : { name: connector.name, kind: connector.kind },
      );
    }
    return success({ channels });
  });
  admin.post('/channels/sync', async (request) => {
    const { orderNo } = parseInput(syncInput, request.body);
    return success(await syncOrder(services, configuredChannels(services), orderNo));
  });
}
