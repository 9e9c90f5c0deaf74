import { createHash, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError, unauthorized } from '../../errors.js';
import type { Db } from '../../db/db.js';
import { success } from '../../http/errors.js';
import type { Config } from '../../config.js';
import { rawTarget } from '../../http/merchant-api.js';
import { strictJsonBodies } from '../../http/strict-json.js';
import type { ChannelServices } from '../channels/apply.js';
import { channelAdminRoutes } from '../channels/routes.js';
import { reconciliationAdminRoutes } from '../reconciliation/routes.js';
import type { Merchants } from '../merchants/service.js';
import type { MasterKeyReseal, PlatformKeys } from '../platform-keys/service.js';
import type { Audit, AuditContext, AuditRecord } from '../audit/service.js';
import type { Accounts } from '../accounts/service.js';
import type { InTransaction } from '../../db/db.js';
import type { Webhooks } from '../webhooks/service.js';
import { parseInput, parseQuery } from '../../validation.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

// The operator API's request schemas, built once here: zod compiles an object schema's parser on
// its first parse, so a schema built inside a handler would be compiled again on every request.
/** POST /merchants */
const merchantInput = z.object({ name: z.string(), publicKey: z.string() });
/** The `:accessKey` of the /merchants/:accessKey/… routes. */
const accessKeyParam = z.object({ accessKey: z.string() });
/** POST /merchants/:accessKey/keys */
const addKeyInput = z.object({ publicKey: z.string() });
/** POST /merchants/:accessKey/keys/retire */
const retireKeyInput = z.object({ key: z.string() });
/** POST /merchants/:accessKey/users */
const inviteInput = z.object({ email: z.string(), role: z.string().optional() });
/** POST /operators */
const operatorInviteInput = z.object({ email: z.string(), role: z.string().optional() });
/** POST /operators/remove */
const operatorRemoveInput = z.object({ email: z.string() });
/** POST /events/resend */
const resendInput = z.object({ eventId: z.string() });
/** POST /platform-keys/rotate */
const rotateInput = z.object({ kind: z.enum(['body', 'webhook']) });
/** POST /platform-keys/retire */
const retirePlatformKeyInput = z.object({ keyId: z.string() });

/** Constant-time bearer token check (hashing first makes the comparison length-independent). */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const presented = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  return timingSafeEqual(digest(presented), digest(token));
}

/** The services the operator API uses: its own, and the channels layer's for its channel routes. */
export interface AdminServices extends ChannelServices {
  readonly platformKeys: PlatformKeys;
  readonly merchants: Merchants;
  readonly portal: Accounts;
  readonly operators: Accounts;
  readonly webhooks: Webhooks;
  readonly db: Db;

  readonly audit: Audit;
}

/** The audit context of an operator command: the operator API's request. */
const operatorContext = (request: FastifyRequest): AuditContext => ({
  actor: { kind: 'operator' },
  ip: request.ip,
  requestId: request.id,
});

/** What `paygate merchant create --json` prints (decisions.md, Operator command line). */
export async function onboardingView(
  services: { readonly platformKeys: PlatformKeys; readonly config: Config },
  accessKey: string,
) {
  const body = await services.platformKeys.activeBodyKey();
  const webhookKeys = await services.platformKeys.publishedWebhookKeys();
  return {
    accessKey,
    environment: services.config.environment,
    bodyKey: { keyId: body.keyId, publicKey: body.publicKey },
    webhookKeys: webhookKeys.map((key) => ({ keyid: key.keyId, publicKey: key.publicKey })),
  };
}

/**
 * The operator API behind `npx paygate`: bearer-token protected, JSON in and out. The command
 * line talks to the running server through it, so it works the same over PGlite and PostgreSQL.
 */
export function adminRoutes(
  admin: FastifyInstance,
  services: AdminServices,
  adminToken: string,
  serverId?: string | undefined,
): void {
  // Every answer names the instance, a refusal too: `paygate` compares it with the server.json of
  // the data directory its token came from.
  if (serverId) {
    admin.addHook('onSend', async (_request, reply) => {
      reply.header('paygate-server-id', serverId);
    });
  }
  admin.addHook('onRequest', async (request: FastifyRequest) => {
    if (!tokenMatches(request.headers.authorization, adminToken)) throw unauthorized();
  });
  strictJsonBodies(admin);
  /** Records `record(detail)` as the operator's, in the transaction of the change. */
  const audited =
    <D = void>(request: FastifyRequest, record: (detail: D) => AuditRecord): InTransaction<D> =>
    (tx, detail) =>
      services.audit.record(tx, operatorContext(request), record(detail));
  // No operator endpoint takes query parameters: any is refused rather than ignored.
  admin.addHook('preHandler', async (request) => {
    parseQuery(rawTarget(request).query, []);
  });

  admin.post('/merchants', async (request) => {
    const input = parseInput(merchantInput, request.body);
    const { accessKey } = await services.merchants.create(
      input.name,
      input.publicKey,
      audited(request, ({ accessKey: created }: { accessKey: string }) => ({
        action: 'merchant.created',
        merchant: created,
        detail: { name: input.name.trim() },
      })),
    );
    return success(await onboardingView(services, accessKey));
  });
  admin.get('/merchants', async () => success(await services.merchants.list()));
  channelAdminRoutes(admin, services);
  reconciliationAdminRoutes(admin, services);

  admin.get('/merchants/:accessKey/keys', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    return success(await services.merchants.keys(accessKey));
  });
  admin.post('/merchants/:accessKey/keys', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    const { publicKey } = parseInput(addKeyInput, request.body);
    return success(
      await services.merchants.addKey(
        accessKey,
        publicKey,
        audited(request, ({ keyId }: { keyId: string }) => ({
          action: 'key.added',
          merchant: accessKey,
          object: keyId,
        })),
      ),
    );
  });
  admin.post('/merchants/:accessKey/keys/retire', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    const { key } = parseInput(retireKeyInput, request.body);
    return success(
      await services.merchants.retireKey(
        accessKey,
        key,
        audited(request, ({ keyId }: { keyId: string }) => ({
          action: 'key.retired',
          merchant: accessKey,
          object: keyId,
        })),
      ),
    );
  });

  admin.post('/merchants/:accessKey/disable', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    return success(
      await services.merchants.setDisabled(
        accessKey,
        true,
        audited(request, () => ({ action: 'merchant.disabled', merchant: accessKey })),
      ),
    );
  });
  admin.post('/merchants/:accessKey/enable', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    return success(
      await services.merchants.setDisabled(
        accessKey,
        false,
        audited(request, () => ({ action: 'merchant.enabled', merchant: accessKey })),
      ),
    );
  });

  // Portal users: an invitation is a one-time setup link (the token travels in the fragment, so
  // it never reaches a server log or a Referer); using it sets the password.
  admin.post('/merchants/:accessKey/users', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    const input = parseInput(inviteInput, request.body);
    const invitation = await services.portal.invite(accessKey, input, operatorContext(request));
    return success({
      email: invitation.email,
      accessKey: invitation.accessKey,
      role: invitation.role,
      setupUrl: services.portal.setupUrl(invitation),
      expiresAt: invitation.expiresAt,
      existingUser: invitation.existing,
    });
  });
  admin.get('/merchants/:accessKey/users', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    return success(await services.portal.users(accessKey));
  });

  // The back office's operators (`paygate operator invite|list|remove`): the first admin is invited
  // here, from the host; the setup link is the command's output and goes nowhere else.
  admin.post('/operators', async (request) => {
    const input = parseInput(operatorInviteInput, request.body);
    const invitation = await services.operators.invite(null, input, operatorContext(request));
    return success({
      email: invitation.email,
      role: invitation.role,
      setupUrl: services.operators.setupUrl(invitation),
      expiresAt: invitation.expiresAt,
      existingOperator: invitation.existing,
    });
  });
  admin.get('/operators', async () => success({ operators: await services.operators.users(null) }));
  admin.post('/operators/remove', async (request) => {
    const input = parseInput(operatorRemoveInput, request.body);
    return success({ operators: await services.operators.remove(null, input, operatorContext(request)) });
  });

  admin.post('/events/resend', async (request) => {
    const { eventId } = parseInput(resendInput, request.body);
    return success(
      await services.webhooks.resend(eventId, undefined, async (tx, { merchantId }) => {
        const merchant = await services.merchants.profile(merchantId, tx);
        await services.audit.record(tx, operatorContext(request), {
          action: 'event.resent',
          merchant: merchant?.accessKey ?? null,
          object: eventId,
        });
      }),
    );
  });

  admin.get('/platform-keys', async () => success(await services.platformKeys.list()));
  admin.post('/platform-keys/rotate', async (request) => {
    const { kind } = parseInput(rotateInput, request.body);
    return success(
      await services.platformKeys.rotate(
        kind,
        audited(request, ({ keyId }: { keyId: string }) => ({
          action: 'platform-key.rotated',
          merchant: null,
          object: keyId,
          detail: { kind },
        })),
      ),
    );
  });
  admin.post('/platform-keys/retire', async (request) => {
    const { keyId } = parseInput(retirePlatformKeyInput, request.body);
    return success(
      await services.platformKeys.retire(
        keyId,
        audited(request, () => ({ action: 'platform-key.retired', merchant: null, object: keyId })),
      ),
    );
  });
  // Master key rotation: which master keys the platform keys are sealed under, and the re-seal
  // under this instance's PAYGATE_MASTER_KEY (docs/operations.md, "Master key").
  admin.get('/master-key', async () => success(await services.platformKeys.masterKeyStatus()));

  // `paygate backup`: the embedded database's data directory, taken between transactions while
  // the server serves (this process owns the directory, so the dump is taken here and streamed).
  admin.get('/backup', async (request, reply) => {
    const started = performance.now();
    const dump = services.db.embeddedDump('gzip');
    if (!dump) {
      throw new DomainError(
        'CONFLICT',
        'this server runs on PostgreSQL: back it up with pg_dump or WAL archiving (docs/operations.md, "Backups and restore")',
      );
    }
    const archive = await dump;
    request.log.info({ bytes: archive.size, ms: Math.round(performance.now() - started) }, 'backup taken');
    return reply
      .type('application/gzip')
      .header('content-length', archive.size)
      .header('cache-control', 'no-store')
      .send(Readable.fromWeb(archive.stream() as WebReadableStream<Uint8Array>));
  });

  admin.post('/master-key/reseal', async (request) =>
    success(
      await services.platformKeys.resealUnderCurrentKey(async (tx, done: MasterKeyReseal) => {
        // The portal's TOTP secrets are sealed under the master key too: re-sealed in the same transaction.
        const secrets = await services.portal.resealSecrets(tx);
        await services.audit.record(tx, operatorContext(request), {
          action: 'master-key.resealed',
          merchant: null,
          object: done.currentKeyId,
          detail: { resealed: done.resealed, retiredMasterKeyIds: done.retiredMasterKeyIds, totpSecrets: secrets },
        });
      }),
    ),
  );

  // The audit trail (`paygate audit list` and `paygate audit verify`): everything, or one
  // merchant's, oldest first; and the walk of its hash chain.
  admin.get('/audit', async () => success({ entries: await services.audit.list() }));
  admin.get('/merchants/:accessKey/audit', async (request) => {
    const { accessKey } = parseInput(accessKeyParam, request.params);
    return success({ entries: await services.audit.list({ merchant: accessKey }) });
  });
  admin.get('/audit/verify', async () => success(await services.audit.verify()));
}
