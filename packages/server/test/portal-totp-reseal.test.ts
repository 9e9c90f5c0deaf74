/**
 * The portal's TOTP secrets are sealed under the master key, like the platform keys:
 * `paygate master-key reseal` re-seals them too, so a person's authenticator app keeps working
 * once the old master key is gone.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../src/config.js';
import { generateMasterKey } from '../src/crypto/master-key.js';
import { totpCode, TOTP_PERIOD_MS } from '../src/modules/accounts/second-factor.js';
import { type Platform, startPlatform } from '../src/platform.js';
import { createMerchant, databases, freshPostgres } from './harness.js';
import { ADMIN_TOKEN, PASSWORD, PortalClient, portalUser } from './portal-harness.js';

for (const database of databases()) {
  describe(`TOTP secrets across a master key rotation (${database})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const cleanup of cleanups) await cleanup();
    });

    it('are re-sealed with the platform keys, and open under the new key alone', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'paygate-totp-reseal-'));
      const pg = database === 'postgres' ? await freshPostgres() : undefined;
      cleanups.push(async () => {
        await pg?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      });
      let clock = Date.UTC(2026, 10, 27, 12, 0, 0);
      const start = (keys: { current: string; previous?: string }): Promise<Platform> =>
        startPlatform(
          parseConfig({
            PAYGATE_DATA_DIR: dataDir,
            ...(pg ? { DATABASE_URL: pg.url } : {}),
            PORT: '0',
            HOST: '127.0.0.1',
            PAYGATE_WORKERS: 'false',
            PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
            PAYGATE_MASTER_KEY: keys.current,
            ...(keys.previous ? { PAYGATE_MASTER_KEY_PREVIOUS: keys.previous } : {}),
          }),
          { logger: false, now: () => clock },
        );
      const oldKey = generateMasterKey();
      const newKey = generateMasterKey();

      const before = await start({ current: oldKey });
      const shop = await createMerchant(before, 'Reseal Shop');
      const user = await portalUser(before, shop);
      const client = await PortalClient.signIn(before, user.email, PASSWORD);
      const started = await client.post<{ secret: string }>('/portal/api/second-factor/totp', {});
      const secret = started.body.data?.secret as string;
      const confirmed = await client.post('/portal/api/second-factor/totp/confirm', { code: totpCode(secret, clock) });
      assert.equal(confirmed.status, 200, confirmed.text);
      await before.close();

      const during = await start({ current: newKey, previous: oldKey });
      const resealed = await fetch(`${during.url}/admin/v1/master-key/reseal`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(resealed.status, 200, await resealed.text());
      const entry = (await during.services.audit.list({ action: 'master-key.resealed' })).at(-1);
      assert.equal(entry?.detail?.totpSecrets, 1);
      await during.close();

      const afterwards = await start({ current: newKey });
      try {
        clock += TOTP_PERIOD_MS;
        const again = await PortalClient.signIn(afterwards, user.email, PASSWORD);
        const checked = await again.post('/portal/api/session/second-factor', { code: totpCode(secret, clock) });
        assert.equal(checked.status, 200, checked.text);
        assert.equal((await again.get('/portal/api/credentials')).status, 200);
      } finally {
        await afterwards.close();
      }
    });
  });
}
