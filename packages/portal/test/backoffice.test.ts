/**
 * The back office web app in Chromium (issue 45), on both databases: the first admin invited from
 * the command line sets a password and an authenticator app through the setup link; finds a
 * merchant's order by its merchantOrderNo, reads its story (the failed webhook attempts), replays
 * the merchant's failed deliveries with a reason and sees the count; proposes a balance credit
 * that a second operator, signed in with a TOTP code in another browser, approves; adds a passkey
 * through Chromium's virtual authenticator and signs in with it, after the password and alone.
 * What a role does not allow has no button; a refusal shows the server's message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { totpCode } from '../../server/src/modules/accounts/second-factor.js';
import { operator, type OperatorClient } from '../../server/test/backoffice-harness.js';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { ADMIN_TOKEN, PASSWORD } from '../../server/test/portal-harness.js';
import { type Receiver, startReceiver } from '../../server/test/receiver.js';
import { runCliAsync } from '../../server/test/spawned.js';
import { axeViolations, ensureBackofficeBuilt, launchChromium, screenshot, SKIP_BROWSER } from './browser.js';

const toLocalInput = (ms: number) => {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

for (const [index, database] of databases().entries()) {
  describe(`the journey of a newcomer to the back office (${database}) in Chromium`, { skip: SKIP_BROWSER }, () => {
    let platform: TestPlatform;
    let receiver: Receiver;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let cdp: CDPSession;
    let base: string;
    let shop: TestMerchant;
    let totpSecret = '';
    const adminEmail = `root-${database}@ops.example`;
    let orderNo = '';
    let merchantOrderNo = '';
    /** Screenshots of each page at 1280 and 375 px, on the first database only (same pages on both). */
    const shots = index === 0;

    /** axe on the page, then desktop and phone screenshots (axe again at phone width). */
    const capture = async (target: Page, name: string) => {
      assert.deepEqual(await axeViolations(target), [], `${name}: axe at 1280 px`);
      if (!shots) return;
      await screenshot(target, `backoffice-${name}-desktop`);
      const size = target.viewportSize() ?? { width: 1280, height: 900 };
      await target.setViewportSize({ width: 375, height: 800 });
      assert.deepEqual(await axeViolations(target), [], `${name}: axe at 375 px`);
      await screenshot(target, `backoffice-${name}-phone`);
      await target.setViewportSize(size);
    };
    const heading = (target: Page, name: string | RegExp) => target.getByRole('heading', { level: 1, name }).waitFor();
    const deliverAll = async () => {
      for (let round = 0; round < 20; round++) {
        while ((await platform.services.webhooks.deliverNext('test')) !== 'idle');
        const pending = await platform.services.db.query<{ n: bigint }>(
          "SELECT count(*)::bigint AS n FROM events WHERE delivery_status = 'pending'",
        );
        if (Number(pending.rows[0]?.n) === 0) return;
        platform.advance(1_000);
      }
      assert.fail('events stayed pending');
    };
    /** A TOTP code of the admin's app, in a time step no code was used in yet. */
    const nextCode = () => {
      platform.advance(30_000);
      return totpCode(totpSecret, platform.services.now());
    };

    before(async () => {
      ensureBackofficeBuilt();
      browser = await launchChromium();
      receiver = await startReceiver({ status: 500, body: 'down' });
      platform = await startTestPlatform({
        database,
        env: { PAYGATE_PUBLIC_URL: 'http://localhost:0', PAYGATE_WEBHOOK_RETRY_SCHEDULE: '1ms' },
      });
      // WebAuthn needs a domain as its relying party: localhost, a secure context.
      base = `http://localhost:${new URL(platform.url).port}`;
      shop = await createMerchant(platform, 'Journey Shop');
      const created = await post<{ orderNo: string; merchantOrderNo: string }>(
        platform,
        shop,
        '/api/v1/payments',
        paymentInput({ webhookUrl: `${receiver.url}/hook` }),
      );
      orderNo = created.body.data?.orderNo as string;
      merchantOrderNo = created.body.data?.merchantOrderNo as string;
      await post(platform, shop, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'SUCCEEDED' });
      await deliverAll();
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
      page.setDefaultTimeout(15_000);
      cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
    });
    after(async () => {
      await browser?.close();
      await platform?.close();
      await receiver?.close();
    });

    it('the first admin, invited from the command line, sets a password and an authenticator app', async () => {
      const invited = await runCliAsync(['operator', 'invite', '--email', adminEmail, '--role', 'admin', '--json'], {
        PAYGATE_URL: platform.url,
        PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      });
      assert.equal(invited.status, 0, invited.stderr);
      const { setupUrl } = JSON.parse(invited.stdout) as { setupUrl: string };
      assert.ok(setupUrl.startsWith(`${base}/backoffice/setup#token=`), setupUrl);

      await page.goto(setupUrl);
      await heading(page, 'Set your password');
      await capture(page, '01-setup');
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('Repeat the password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password' }).click();
      await heading(page, 'Set up a second factor');
      assert.equal(new URL(page.url()).hash, '', 'the one-time token left the address bar');
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      totpSecret = ((await page.getByTestId('totp-secret').textContent()) ?? '').trim();
      assert.match(totpSecret, /^[A-Z2-7]+=*$/);
      await capture(page, '02-second-factor-setup');
      await page.getByLabel('First code from the app').fill(totpCode(totpSecret, platform.services.now()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('list', { name: 'Recovery codes' }).waitFor();
      await page.getByRole('button', { name: 'I saved them' }).click();
      await heading(page, 'Search');
      assert.equal(new URL(page.url()).pathname, '/backoffice/search');
      const setUp = await platform.services.audit.list({ action: 'second_factor.added' });
      assert.equal(setUp.at(-1)?.actor.email, adminEmail);
    });

    it('signs in with the password and a TOTP code', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await heading(page, 'Sign in to the back office');
      await capture(page, '03-sign-in');
      await page.getByLabel('Email').fill(adminEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await heading(page, 'Enter your code');
      await capture(page, '04-enter-code');
      await page.getByLabel('Code from your authenticator app').fill(nextCode());
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await heading(page, 'Search');
      const entries = await platform.services.audit.list({ action: 'signin.succeeded' });
      assert.equal(entries.at(-1)?.actor.email, adminEmail);
    });

    it("finds the merchant's order by its merchantOrderNo and reads its story", async () => {
      await page.getByLabel('Identifier or amount').fill(merchantOrderNo);
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      const results = page.getByRole('region', { name: 'Orders found' });
      await results.getByRole('link', { name: orderNo }).waitFor();
      assert.equal(await results.getByRole('row').count(), 2, 'a header and the one order');
      assert.match(new URL(page.url()).search, new RegExp(`q=${merchantOrderNo}`));
      const csv = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
      assert.equal(csv, `/backoffice/api/orders/export.csv?q=${merchantOrderNo}`);
      await capture(page, '05-search');

      await results.getByRole('link', { name: orderNo }).click();
      await heading(page, `Order ${orderNo}`);
      const timeline = page.getByRole('list', { name: 'Timeline of the order' });
      await timeline.getByText('SUCCEEDED').first().waitFor();
      const text = (await timeline.textContent()) ?? '';
      assert.match(text, /by the merchant's API/);
      assert.match(text, /by the sandbox/);
      assert.match(text, /HTTP 500/, 'each delivery attempt with its status');
      assert.match(text, /Ledger/);
      assert.ok(await page.getByRole('button', { name: 'Ask the channel again' }).isVisible());
      await page.getByRole('link', { name: shop.accessKey }).waitFor();
      await capture(page, '06-order-story');
    });

    it("replays the merchant's failed deliveries with a reason and shows the count", async () => {
      await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Events' }).click();
      await heading(page, 'Events');
      const list = page.getByRole('region', { name: 'Events' });
      await list.getByRole('link', { name: orderNo }).first().waitFor();
      receiver.fallback = { status: 200, body: 'ok' };
      const replay = page.getByRole('form', { name: 'Replay failed deliveries' });
      await replay.getByLabel('Merchant').fill(shop.accessKey);
      await replay.getByLabel('From').fill(toLocalInput(Date.now() - 86_400_000));
      await replay.getByLabel('To').fill(toLocalInput(Date.now() + 86_400_000));
      await replay.getByLabel('Reason').fill('Receiver back up after the outage');
      await capture(page, '07-events');
      await replay.getByRole('button', { name: 'Replay' }).click();
      await page.getByText('1 failed delivery is queued again').waitFor();
      const before = receiver.received.length;
      await deliverAll();
      assert.equal(receiver.received.length, before + 1, 'the event delivered again');
      const entry = (await platform.services.audit.list({ action: 'events.replayed' })).at(-1);
      assert.equal(entry?.actor.email, adminEmail);
      assert.equal(entry?.detail?.count, 1);
      assert.equal(entry?.detail?.reason, 'Receiver back up after the outage');
    });

    it('proposes a balance credit that another operator, signed in with a TOTP code, approves', async () => {
      await page.getByRole('navigation', { name: 'Primary' }).getByRole('link', { name: 'Money' }).click();
      await heading(page, 'Money');
      const form = page.getByRole('form', { name: 'Propose an adjustment' });
      await form.getByLabel('Merchant').fill(shop.accessKey);
      await form.getByLabel('Currency').selectOption('BRL');
      await form.getByLabel('Amount').fill('5.00');
      await form.getByLabel('Reason').fill('Goodwill credit for the outage');
      await form.getByRole('button', { name: 'Propose adjustment' }).click();
      await page.getByText(/^Proposed .* another operator approves it\.$/).waitFor();
      const table = page.getByRole('region', { name: 'Adjustments', exact: true });
      await table.getByText('Another operator decides').waitFor();
      assert.equal(await table.getByRole('button', { name: /^Approve/ }).count(), 0, 'the proposer has no Approve');
      await capture(page, '08-money');

      const finance: OperatorClient = await operator(platform, 'finance', `finance-${database}@ops.example`);
      const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const second = await other.newPage();
        second.setDefaultTimeout(15_000);
        await second.goto(`${base}/backoffice/money`);
        await heading(second, 'Sign in to the back office');
        await second.getByLabel('Email').fill(finance.email);
        await second.getByLabel('Password').fill(PASSWORD);
        await second.getByRole('button', { name: 'Sign in', exact: true }).click();
        await heading(second, 'Enter your code');
        platform.advance(30_000);
        await second.getByLabel('Code from your authenticator app').fill(finance.code(platform));
        await second.getByRole('button', { name: 'Sign in', exact: true }).click();
        await heading(second, 'Money');
        await second
          .getByRole('region', { name: 'Adjustments', exact: true })
          .getByRole('button', { name: `Approve 5.00 BRL for ${shop.accessKey}` })
          .click();
        await second.getByText(`to ${shop.accessKey}.`, { exact: false }).waitFor();
      } finally {
        await other.close();
      }
      const booked = await finance.bo<{ adjustments: { status: string; decidedBy: string; proposedBy: string }[] }>(
        '/adjustments?status=BOOKED',
      );
      assert.equal(booked.body.data?.adjustments.length, 1);
      assert.equal(booked.body.data?.adjustments[0]?.proposedBy, adminEmail);
      assert.equal(booked.body.data?.adjustments[0]?.decidedBy, finance.email);
      assert.equal((await platform.services.audit.verify()).ok, true);
    });

    it('adds a passkey, then signs in with it after the password and alone', async () => {
      await page.getByRole('link', { name: adminEmail }).click();
      await heading(page, 'Your account');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      await page.getByLabel('Passkey name').fill('Ops laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Passkey “Ops laptop” added').waitFor();
      await page.getByRole('region', { name: 'Your sessions' }).waitFor();
      await capture(page, '09-account');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email').fill(adminEmail);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await heading(page, 'Enter your code');
      await page.getByRole('button', { name: 'Use your passkey' }).click();
      await heading(page, 'Search');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await heading(page, 'Sign in to the back office');
      await page.getByRole('button', { name: 'Use a passkey', exact: true }).click();
      await heading(page, 'Search');
      const entries = await platform.services.audit.list({ action: 'signin.succeeded' });
      assert.equal(entries.at(-1)?.actor.email, adminEmail);
      assert.deepEqual(entries.at(-1)?.detail, { with: 'passkey' });
    });

    it('each page, with what the role allows; a refusal shows its message', async () => {
      // The admin's pages.
      await page.goto(`${base}/backoffice/merchants`);
      await heading(page, 'Merchants');
      await page.getByRole('region', { name: 'Merchants' }).getByRole('link', { name: 'Journey Shop' }).waitFor();
      await capture(page, '10-merchants');
      await page.getByRole('region', { name: 'Merchants' }).getByRole('link', { name: 'Journey Shop' }).click();
      await heading(page, 'Journey Shop');
      await page.getByRole('button', { name: 'Disable the merchant' }).waitFor();
      await page.getByRole('region', { name: 'Its rates' }).waitFor();
      await capture(page, '11-merchant');
      await page.goto(`${base}/backoffice/channels`);
      await heading(page, 'Channels');
      await capture(page, '12-channels');
      await page.goto(`${base}/backoffice/audit`);
      await heading(page, 'Audit trail');
      await page.getByTestId('chain').getByText('Intact').waitFor();
      await page.getByRole('region', { name: 'Audit entries' }).getByText('adjustment.booked').waitFor();
      await capture(page, '13-audit');
      await page.goto(`${base}/backoffice/operators`);
      await heading(page, 'Operators');
      await page
        .getByRole('region', { name: 'Operators' })
        .getByRole('cell', { name: `${adminEmail} (you)` })
        .waitFor();
      await capture(page, '14-operators');
      // Invite one, change their role, remove them; the last admin stays (the API refuses, the page says so).
      const newcomer = `newcomer-${database}@ops.example`;
      const invite = page.getByRole('region', { name: 'Invite an operator' });
      await invite.getByLabel('Email').fill(newcomer);
      await invite.getByLabel('Role').selectOption('auditor');
      await invite.getByRole('button', { name: 'Invite' }).click();
      await page.getByText(`${newcomer} is invited as auditor.`).waitFor();
      const link = (await page.getByTestId('value-setup-link').textContent()) ?? '';
      assert.ok(link.startsWith(`${base}/backoffice/setup#token=`), link);
      await page.getByLabel(`Role of ${newcomer}`).selectOption('support');
      await page.getByText(`${newcomer} is now support.`).waitFor();
      await page.getByRole('button', { name: `Remove ${newcomer}` }).click();
      await page.getByText(`${newcomer} was removed`).waitFor();
      await page.getByRole('button', { name: `Remove ${adminEmail}` }).click();
      const kept = page.getByRole('alert');
      await kept.waitFor();
      assert.match((await kept.textContent()) ?? '', /admin/);
      const operators = await platform.services.operators.users(null);
      assert.deepEqual(
        operators.map((o) => `${o.email} ${o.role}`).sort(),
        [`${adminEmail} admin`, `finance-${database}@ops.example finance`].sort(),
      );

      // A support operator: no money, merchant or operator buttons; its resend refused once its role changed.
      const support = await operator(platform, 'support', `support-${database}@ops.example`);
      const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const third = await other.newPage();
        third.setDefaultTimeout(15_000);
        await third.goto(`${base}/backoffice/`);
        await third.getByLabel('Email').fill(support.email);
        await third.getByLabel('Password').fill(PASSWORD);
        await third.getByRole('button', { name: 'Sign in', exact: true }).click();
        platform.advance(30_000);
        await third.getByLabel('Code from your authenticator app').fill(support.code(platform));
        await third.getByRole('button', { name: 'Sign in', exact: true }).click();
        await heading(third, 'Search');
        const nav = third.getByRole('navigation', { name: 'Primary' });
        assert.equal(await nav.getByRole('link', { name: 'Operators' }).count(), 0);
        assert.equal(await nav.getByRole('link', { name: 'Audit' }).count(), 0);
        await nav.getByRole('link', { name: 'Money' }).click();
        await heading(third, 'Money');
        await third.getByRole('region', { name: 'Adjustments', exact: true }).waitFor();
        assert.equal(await third.getByRole('form', { name: 'Propose an adjustment' }).count(), 0);
        await third.goto(`${base}/backoffice/merchants/${shop.accessKey}`);
        await heading(third, 'Journey Shop');
        assert.equal(await third.getByRole('button', { name: 'Disable the merchant' }).count(), 0);
        assert.equal(await third.getByRole('button', { name: 'Invite an owner' }).count(), 0);
        await third.goto(`${base}/backoffice/orders/${orderNo}`);
        await heading(third, `Order ${orderNo}`);
        const resend = third.getByRole('button', { name: /^Resend event / }).first();
        await resend.waitFor();
        // Another admin makes them an auditor meanwhile: the button they still see is refused.
        const admin = await operator(platform, 'admin', `admin-${database}@ops.example`);
        const demoted = await admin.boPost('/operators/role', { email: support.email, role: 'auditor' });
        assert.equal(demoted.status, 200, demoted.text);
        await resend.click();
        const refusal = third.getByRole('alert');
        await refusal.waitFor();
        assert.match((await refusal.textContent()) ?? '', /auditor/, 'the 403 names the role');
      } finally {
        await other.close();
      }
    });
  });
}
