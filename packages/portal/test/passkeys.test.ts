/**
 * Passkeys in Chromium, through its virtual authenticator (the DevTools protocol's WebAuthn
 * domain): a person registers two, signs in with one alone, and uses one as the second factor
 * after the password. The portal is served as http://localhost (WebAuthn needs a domain as its
 * relying party, and localhost is a secure context).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import {
  createMerchant,
  databases,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { PASSWORD, portalUser } from '../../server/test/portal-harness.js';
import { axeViolations, ensurePortalBuilt, launchChromium, screenshot, SKIP_BROWSER } from './browser.js';

for (const database of databases()) {
  describe(`passkeys in Chromium's virtual authenticator (${database})`, { skip: SKIP_BROWSER }, () => {
    let platform: TestPlatform;
    let browser: Browser;
    let shop: TestMerchant;
    let user: { email: string; password: string };
    let context: BrowserContext;
    let page: Page;
    let cdp: CDPSession;
    let base: string;

    before(async () => {
      browser = await launchChromium();
      ensurePortalBuilt();
      platform = await startTestPlatform({ database, env: { PAYGATE_PUBLIC_URL: 'http://localhost:0' } });
      base = `http://localhost:${new URL(platform.url).port}`;
      assert.equal(platform.config.publicUrl, base);
      shop = await createMerchant(platform, 'Passkey Shop');
      user = await portalUser(platform, shop);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
    });

    after(async () => {
      await browser?.close();
      await platform?.close();
    });

    const authenticator = async () => {
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      return authenticatorId;
    };
    const signOut = async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to the merchant portal' }).waitFor();
    };

    it('registers two passkeys from the Account page', async () => {
      await page.goto(`${base}/portal/`);
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

      const laptop = await authenticator();
      await page.goto(`${base}/portal/account`);
      await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
      await page.getByLabel('Passkey name').fill('Work laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Passkey “Work laptop” added').waitFor();

      // A second one, on another authenticator (a security key).
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: laptop });
      await authenticator();
      await page.getByLabel('Passkey name').fill('Security key');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Passkey “Security key” added').waitFor();
      const rows = page.getByRole('region', { name: 'Your passkeys' }).getByRole('row');
      assert.equal(await rows.count(), 3, 'a header and two passkeys');
      assert.deepEqual(await axeViolations(page), [], 'account page with passkeys');
      await screenshot(page, 'passkeys-01-account-desktop');
      const stored = await platform.services.db.query<{ n: bigint }>(
        'SELECT count(*)::bigint AS n FROM portal_passkeys',
      );
      assert.equal(Number(stored.rows[0]?.n), 2);
    });

    it('signs in with a passkey alone', async () => {
      await signOut();
      await page.getByRole('button', { name: 'Use a passkey', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const entries = await platform.services.audit.list({ merchant: shop.accessKey, action: 'signin.succeeded' });
      assert.deepEqual(entries.at(-1)?.detail, { with: 'passkey' });
      assert.equal(entries.at(-1)?.actor.email, user.email);
    });

    it('after the password, a passkey is the second factor', async () => {
      await signOut();
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Enter your code' }).waitFor();
      assert.deepEqual(await axeViolations(page), [], 'second-factor page');
      await screenshot(page, 'passkeys-02-second-factor-desktop');
      await page.getByRole('button', { name: 'Use your passkey' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const actions = (await platform.services.audit.list({ merchant: shop.accessKey })).map((e) => e.action);
      assert.ok(actions.includes('signin.password_accepted'));
      assert.equal(actions.filter((a) => a === 'second_factor.added').length, 2);
      assert.equal((await platform.services.audit.verify()).ok, true);
    });
  });
}
