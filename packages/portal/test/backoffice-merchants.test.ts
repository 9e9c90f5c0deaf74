/**
 * The back office's merchant and money actions in Chromium (issue 45), past the journey: an admin
 * creates a merchant from its public key, disables it (its API refuses) and enables it again (its
 * API answers), invites its first owner and sees the setup link; proposes a change of a merchant's
 * fee plan that a finance operator, signed in with a TOTP code in another browser, approves (the
 * merchant's `GET /api/v1/rates` and its page show the new fee); runs a reconciliation of a
 * channel's day from the Money page against a settlement file (it needs no bank: the file is
 * given). On PGlite only: the storage behind each action is covered on both databases by the
 * server's back-office suites; this file tests the pages' buttons.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { boxPublicKeyFrom, generateSigningKey } from '@paygate/protocol';
import type { Browser, Page } from 'playwright-core';
import { onboardingView } from '../../server/src/modules/admin/routes.js';
import { operator, type OperatorClient } from '../../server/test/backoffice-harness.js';
import {
  createMerchant,
  get,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { PASSWORD } from '../../server/test/portal-harness.js';
import { axeViolations, ensureBackofficeBuilt, launchChromium, SKIP_BROWSER } from './browser.js';

describe(
  'the lifecycle of a merchant, its fee plan and a reconciliation in the back office in Chromium',
  { skip: SKIP_BROWSER },
  () => {
    let platform: TestPlatform;
    let browser: Browser;
    let page: Page;
    let admin: OperatorClient;
    let shop: TestMerchant;

    const heading = (target: Page, name: string | RegExp) => target.getByRole('heading', { level: 1, name }).waitFor();

    /** Signs `who` in on a fresh page of its own browser context, at `path`. */
    const signIn = async (who: OperatorClient, path: string) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const target = await context.newPage();
      target.setDefaultTimeout(15_000);
      await target.goto(`${platform.url}/backoffice${path}`);
      await target.getByLabel('Email').fill(who.email);
      await target.getByLabel('Password').fill(PASSWORD);
      await target.getByRole('button', { name: 'Sign in', exact: true }).click();
      platform.advance(30_000);
      await target.getByLabel('Code from your authenticator app').fill(who.code(platform));
      await target.getByRole('button', { name: 'Sign in', exact: true }).click();
      return target;
    };

    before(async () => {
      ensureBackofficeBuilt();
      // A channel to reconcile: a psp-sim one whose simulator is never called (the settlement file is given).
      const dir = mkdtempSync(join(tmpdir(), 'paygate-bo-merchants-'));
      const channels = join(dir, 'channels.json');
      writeFileSync(
        channels,
        JSON.stringify({
          channels: [
            {
              name: 'sim',
              kind: 'psp-sim',
              methods: [{ currency: 'BRL', code: 'PIX' }],
              payouts: ['BRL'],
              baseUrl: 'http://127.0.0.1:9',
              secret: 'a-simulator-secret-of-enough-length',
              timeoutMs: 1_000,
            },
          ],
        }),
      );
      platform = await startTestPlatform({ env: { PAYGATE_CHANNELS: channels } });
      shop = await createMerchant(platform, 'Fee Shop');
      admin = await operator(platform, 'admin');
      browser = await launchChromium();
      page = await signIn(admin, '/merchants');
      await heading(page, 'Merchants');
    });
    after(async () => {
      await browser?.close();
      await platform?.close();
    });

    it('creates a merchant, disables and enables it, and invites its first owner', async () => {
      const key = generateSigningKey();
      const create = page.locator('details', { has: page.getByText('Create a merchant') });
      await create.getByText('Create a merchant').click();
      await create.getByLabel('Name').fill('Loja Nova');
      await create.getByLabel('Its public key').fill(key.publicKey.toString('base64'));
      await create.getByRole('button', { name: 'Create merchant' }).click();
      await page.getByText(/^Merchant created: \S+\. Invite its first owner from its page\.$/).waitFor();
      const accessKey = ((await page.getByTestId('value-access-key').textContent()) ?? '').trim();
      const found = await platform.services.merchants.findId(accessKey);
      assert.ok(found, `the merchant ${accessKey} exists`);
      const view = await onboardingView(platform.services, accessKey);
      const bodyPublic = boxPublicKeyFrom(view.bodyKey.publicKey);
      assert.ok(bodyPublic.ok);
      const created: TestMerchant = {
        accessKey,
        key,
        bodyKey: { keyId: view.bodyKey.keyId, publicKey: bodyPublic.value },
        webhookKeys: view.webhookKeys,
      };
      assert.equal((await get(platform, created, '/api/v1/rates')).status, 200, 'its API answers');

      await page.getByRole('region', { name: 'Merchants' }).getByRole('link', { name: 'Loja Nova' }).click();
      await heading(page, 'Loja Nova');
      await page.getByText('No one yet. Invite the merchant').waitFor();
      await page.getByRole('button', { name: 'Disable the merchant' }).click();
      await page.getByText('The merchant is disabled: its API refuses every request.').waitFor();
      await page.getByRole('button', { name: 'Enable the merchant' }).waitFor();
      const refused = await get(platform, created, '/api/v1/rates');
      assert.notEqual(refused.status, 200, `a disabled merchant's API refuses: ${JSON.stringify(refused.body)}`);
      assert.equal((await platform.services.audit.list({ action: 'merchant.disabled' })).at(-1)?.merchant, accessKey);

      await page.getByRole('button', { name: 'Enable the merchant' }).click();
      await page.getByText('The merchant is enabled: its API answers again.').waitFor();
      await page.getByRole('button', { name: 'Disable the merchant' }).waitFor();
      assert.equal((await get(platform, created, '/api/v1/rates')).status, 200, 'its API answers again');

      const people = page.getByRole('region', { name: 'People' });
      await people.getByLabel("Owner's email").fill('owner@loja-nova.example');
      await people.getByRole('button', { name: 'Invite an owner' }).click();
      await people
        .getByText('owner@loja-nova.example is invited as an owner. Send them the link below: it is shown once.')
        .waitFor();
      const link = ((await people.getByTestId('value-setup-link').textContent()) ?? '').trim();
      assert.match(link, /#token=./, link);
      const row = people.getByRole('region', { name: "The merchant's people" }).getByRole('row', {
        name: /owner@loja-nova\.example/,
      });
      assert.match((await row.textContent()) ?? '', /owner.*invited/);
      assert.deepEqual(await axeViolations(page), [], 'the merchant page after the actions: axe');
    });

    it("a fee-plan change proposed by one operator and approved by another changes the merchant's rates", async () => {
      await page.goto(`${platform.url}/backoffice/merchants/${shop.accessKey}`);
      await heading(page, 'Fee Shop');
      const card = page.getByRole('region', { name: 'Fee plan' });
      await card.getByText("The platform's default plan").waitFor();
      const form = card.getByRole('form', { name: 'Propose a fee change' });
      await form.getByLabel('For').selectOption('payment');
      await form.getByLabel('Currency').selectOption('BRL');
      await form.getByLabel('Method').selectOption('PIX');
      await form.getByLabel('Percent').fill('2.75');
      await form.getByLabel('Fixed').fill('0.45');
      await form.getByLabel('Reason').fill('Negotiated rate for a large shop');
      await form.getByRole('button', { name: 'Propose' }).click();
      await card
        .getByText('The change is proposed: another operator approves or rejects it on the Money page.')
        .waitFor();
      const mine = card.getByRole('region', { name: 'Fee plan changes' });
      await mine.getByText('Another operator decides').waitFor();
      assert.equal(await mine.getByRole('button', { name: /^Approve/ }).count(), 0, 'the proposer has no Approve');
      const before = await get<{ feePercent: string }[]>(platform, shop, '/api/v1/rates', 'currency=BRL&method=PIX');
      assert.doesNotMatch(JSON.stringify(before.body.data), /"2\.75"/, 'nothing changed before the approval');

      const finance = await operator(platform, 'finance');
      const second = await signIn(finance, '/money');
      try {
        await heading(second, 'Money');
        const waiting = second.getByRole('region', { name: 'Fee plan changes waiting' });
        await waiting.getByRole('button', { name: `Approve the fee plan of ${shop.accessKey}` }).click();
        await waiting.getByText(`Applied: ${shop.accessKey}'s orders are charged by the new plan`).waitFor();
        await waiting.getByText(/^None\. A merchant.s page proposes one\.$/).waitFor();
      } finally {
        await second.context().close();
      }

      const rates = await get<unknown>(platform, shop, '/api/v1/rates', 'currency=BRL&method=PIX');
      assert.equal(rates.status, 200);
      assert.match(JSON.stringify(rates.body.data), /"feePercent":"2\.75"/, JSON.stringify(rates.body.data));
      assert.match(JSON.stringify(rates.body.data), /"feeFixed":"0\.45"/, JSON.stringify(rates.body.data));
      await page.reload();
      await heading(page, 'Fee Shop');
      const table = page.getByRole('region', { name: 'Its rates' });
      const pix = table.getByRole('row', { name: /BRL PIX payments/ });
      assert.match((await pix.textContent()) ?? '', /2\.75 %/);
      await page.getByText("Its own plan over the platform's defaults").waitFor();
      const applied = (await platform.services.audit.list({})).filter((e) => e.action.startsWith('fee'));
      assert.ok(
        applied.some((e) => e.actor.email === finance.email),
        `the approval is audited: ${applied.map((e) => `${e.action} ${e.actor.email}`).join(', ')}`,
      );
    });

    it("runs a reconciliation of a channel's day from the Money page against a settlement file", async () => {
      await page.goto(`${platform.url}/backoffice/money`);
      await heading(page, 'Money');
      const card = page.getByRole('region', { name: 'Reconciliation' });
      await card.getByLabel('Channel').selectOption('sim');
      await card.getByLabel('Day (UTC)').fill('2026-01-15');
      await card
        .getByLabel('Settlement file (CSV or camt.054)')
        .fill(
          'type,id,reference,status,currency,amount,paid_amount,fee,updated_at\n' +
            'charge,ch_1,P-NOT-OURS,paid,BRL,10.00,10.00,0.10,2026-01-15T12:00:00Z\n',
        );
      await card.getByRole('button', { name: 'Reconcile' }).click();
      await card.getByText('Reconciled sim on 2026-01-15: 0 matched, 1 mismatched.').waitFor();
      const mismatches = card.getByRole('region', { name: 'Mismatches' });
      const row = mismatches.getByRole('row', { name: /P-NOT-OURS/ });
      assert.match((await row.textContent()) ?? '', /missing_in_books/);
      const run = (await platform.services.audit.list({ action: 'reconciliation.run' })).at(-1);
      assert.equal(run?.actor.email, admin.email);
      assert.deepEqual(run?.detail, { date: '2026-01-15', matched: 0, mismatches: 1 });
      assert.deepEqual(await axeViolations(page), [], 'the Money page with a report: axe');
    });
  },
);
