/**
 * Portal accounts in a real browser: an owner invites a developer and a viewer from the Team
 * page (the invitation arrives by SMTP), each role sees only the buttons it may use, the owner
 * reads the audit trail, and everyone their own sessions. Pages are checked with axe-core and
 * captured at desktop and phone widths.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateSigningKey } from '@paygate/protocol';
import type { Browser, Page } from 'playwright-core';
import { STEP_UP_MS, totpCode } from '../../server/src/modules/accounts/second-factor.js';
import {
  createMerchant,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { PASSWORD, portalUser, setup } from '../../server/test/portal-harness.js';
import { type SmtpSink, startSmtpSink } from '../../server/test/smtp-sink.js';
import { axeViolations, ensurePortalBuilt, launchChromium, screenshot, SKIP_BROWSER } from './browser.js';

describe('portal accounts in Chromium', { skip: SKIP_BROWSER }, () => {
  let platform: TestPlatform;
  let browser: Browser;
  let smtp: SmtpSink;
  let shop: TestMerchant;
  let owner: { email: string; password: string };
  let orderNo: string;
  /** How far the platform's clock was moved ahead (codes are those of its time). */
  let offset = 0;
  const platformNow = () => Date.now() + offset;

  before(async () => {
    browser = await launchChromium();
    ensurePortalBuilt();
    smtp = await startSmtpSink();
    platform = await startTestPlatform({ env: { PAYGATE_SMTP_URL: smtp.url } });
    shop = await createMerchant(platform, 'Loja Equipe');
    owner = await portalUser(platform, shop);
    const created = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
    orderNo = created.body.data?.orderNo as string;
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    await smtp?.close();
  });

  const open = async (email: string, width = 1280, height = 900) => {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${platform.url}/portal/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    return page;
  };

  /** The setup token of the newest invitation emailed to `email`. */
  const emailedToken = (email: string) => {
    const mail = smtp.mails.filter((m) => m.to.includes(email)).at(-1);
    assert.ok(mail, `an invitation was emailed to ${email}`);
    const body = mail.data.replace(/=\r\n/g, '').replace(/=3D/g, '=');
    return /#token=([A-Za-z0-9_-]{43})/.exec(body)?.[1] as string;
  };

  const goto = async (page: Page, path: string, heading: string | RegExp) => {
    await page.goto(`${platform.url}/portal${path}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  it('an owner invites a developer and a viewer from the Team page; the emailed link sets a password and signs in', async () => {
    const page = await open(owner.email);
    await page.getByRole('link', { name: 'Team', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
    for (const [email, role] of [
      ['dev@equipe.example', 'developer'],
      ['view@equipe.example', 'viewer'],
    ] as const) {
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Role', { exact: true }).selectOption(role);
      await page.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`${email} is invited: the setup link was emailed`).waitFor();
      if (role === 'viewer') assert.equal((await setup(platform, emailedToken(email), PASSWORD)).status, 200);
    }
    // The developer follows the link: setting the password goes straight into the portal.
    const invited = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    invited.setDefaultTimeout(10_000);
    await invited.goto(`${platform.url}/portal/setup#token=${emailedToken('dev@equipe.example')}`);
    await invited.getByLabel('New password').fill(PASSWORD);
    await invited.getByLabel('Repeat the password').fill(PASSWORD);
    await invited.getByRole('button', { name: 'Set password' }).click();
    await invited.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    assert.equal(new URL(invited.url()).hash, '', 'the one-time token is gone from the address bar');
    await invited.context().close();
    assert.equal(await page.getByLabel('Role of view@equipe.example').inputValue(), 'viewer');
    assert.deepEqual(await axeViolations(page), [], 'people page');
    await screenshot(page, 'accounts-01-people-desktop');
    await page.context().close();
  });

  it('the viewer sees no button it cannot use, and no Team entry', async () => {
    const page = await open('view@equipe.example');
    assert.equal(await page.getByRole('link', { name: 'Team', exact: true }).count(), 0);
    await goto(page, `/payments/${orderNo}`, `Payment ${orderNo}`);
    assert.equal(await page.getByRole('button', { name: 'Cancel payment' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Simulate/ }).count(), 0);
    await goto(page, '/credentials', 'Credentials');
    assert.equal(await page.getByRole('button', { name: 'Upload key' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Retire' }).count(), 0);
    await page.getByText('the owner or developer role adds and retires them').waitFor();
    await goto(page, '/balances', 'Balances and ledger');
    assert.equal(await page.getByRole('link', { name: 'Download CSV' }).count(), 0);
    await goto(page, '/events', 'Webhook events');
    assert.equal(await page.getByRole('button', { name: 'Resend failed events' }).count(), 0);
    // The server refuses anyway, whatever the page offers.
    const refused = await page.evaluate(async (no) => {
      const session = (await (await fetch('/portal/api/session')).json()) as { data: { csrfToken: string } };
      const response = await fetch(`/portal/api/payments/${no}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrfToken },
        body: '{}',
      });
      return { status: response.status, body: (await response.json()) as { msg: string } };
    }, orderNo);
    assert.deepEqual(refused, {
      status: 403,
      body: {
        msg: 'FORBIDDEN',
        message: 'you have the viewer role: it takes the owner or finance role to cancel orders',
      },
    });
    await page.context().close();
  });

  it('the developer manages keys and the sandbox helpers, but cannot cancel', async () => {
    const page = await open('dev@equipe.example');
    await goto(page, '/credentials', 'Credentials');
    await page.getByRole('button', { name: 'Upload key' }).waitFor();
    await goto(page, `/payments/${orderNo}`, `Payment ${orderNo}`);
    await page
      .getByRole('button', { name: /^Simulate/ })
      .first()
      .waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel payment' }).count(), 0);
    await page.context().close();
  });

  it('the owner reads the audit trail, filters it, and sees each page on a phone without axe issues', async () => {
    const page = await open(owner.email);
    await goto(page, '/audit', 'Audit trail');
    await page.getByText(`${owner.email} invited dev@equipe.example as developer`).waitFor();
    await page.getByLabel('Action').selectOption({ label: 'Signed in' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=signin.succeeded/);
    await page.getByText(`${owner.email} signed in`).first().waitFor();
    assert.equal(await page.getByText(/ invited /).count(), 0);
    assert.deepEqual(await axeViolations(page), [], 'audit page');
    await screenshot(page, 'accounts-02-audit-desktop');
    await goto(page, '/account', 'Your account');
    await page.getByText('(this browser)').waitFor();
    assert.deepEqual(await axeViolations(page), [], 'account page');
    await screenshot(page, 'accounts-03-account-desktop');
    await page.context().close();

    const phone = await open(owner.email, 390, 844);
    for (const [path, heading, name] of [
      ['/people', 'People', 'accounts-04-people-phone'],
      ['/audit', 'Audit trail', 'accounts-05-audit-phone'],
      ['/account', 'Your account', 'accounts-06-account-phone'],
    ] as const) {
      await goto(phone, path, heading);
      assert.deepEqual(await axeViolations(phone), [], `${path} on a phone`);
      const width = await phone.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${path}: no sideways scrolling on a phone (${width}px)`);
      await screenshot(phone, name);
    }
    await phone.context().close();
  });

  it('two-factor: the owner sets up TOTP and requires it; the developer must set one up, and is asked again to add a key', async () => {
    const page = await open(owner.email);
    await goto(page, '/account', 'Your account');
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'TOTP set-up');
    await screenshot(page, 'accounts-07-totp-setup-desktop');
    await page.getByLabel('First code from the app').fill(totpCode(secret, platformNow()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    assert.equal(await codes.count(), 10);
    await screenshot(page, 'accounts-08-recovery-codes-desktop');
    await page.getByRole('button', { name: 'I saved them' }).click();

    await goto(page, '/people', 'People');
    // The box follows the server's answer: it shows checked once the setting is saved.
    await page.getByLabel(/Require a second factor/).click();
    await page.locator('input[type="checkbox"]:checked').waitFor();
    await page.context().close();

    // The developer signs in and is sent to set one up before anything else.
    const dev = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const devPage = await dev.newPage();
    devPage.setDefaultTimeout(10_000);
    await devPage.goto(`${platform.url}/portal/`);
    await devPage.getByLabel('Email').fill('dev@equipe.example');
    await devPage.getByLabel('Password').fill(PASSWORD);
    await devPage.getByRole('button', { name: 'Sign in' }).click();
    await devPage.getByRole('heading', { level: 1, name: 'Set up a second factor' }).waitFor();
    assert.deepEqual(await axeViolations(devPage), [], 'required set-up');
    await screenshot(devPage, 'accounts-09-required-setup-phone');
    await devPage.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const devSecret = (await devPage.getByTestId('totp-secret').textContent()) ?? '';
    await devPage.getByLabel('First code from the app').fill(totpCode(devSecret, platformNow()));
    await devPage.getByRole('button', { name: 'Turn on' }).click();
    await devPage.getByRole('button', { name: 'I saved them' }).click();
    await devPage.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    // Six minutes on, adding a key asks for the code again, then goes through.
    platform.advance(STEP_UP_MS + 60_000);
    offset += STEP_UP_MS + 60_000;
    await goto(devPage, '/credentials', 'Credentials');
    const key = generateSigningKey();
    await devPage.getByLabel('Add a public key').fill(Buffer.from(key.publicKey).toString('base64'));
    await devPage.getByRole('button', { name: 'Upload key' }).click();
    await devPage.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    assert.deepEqual(await axeViolations(devPage), [], 'step-up dialog');
    await screenshot(devPage, 'accounts-10-step-up-phone');
    await devPage.getByLabel('Code from your authenticator app').fill(totpCode(devSecret, platformNow()));
    await devPage.getByRole('button', { name: 'Confirm', exact: true }).click();
    await devPage.getByText('Public key added.').waitFor();
    await dev.close();

    // The owner's next sign-in asks for the code after the password.
    const again = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const ownerPage = await again.newPage();
    ownerPage.setDefaultTimeout(10_000);
    await ownerPage.goto(`${platform.url}/portal/`);
    await ownerPage.getByLabel('Email').fill(owner.email);
    await ownerPage.getByLabel('Password').fill(PASSWORD);
    await ownerPage.getByRole('button', { name: 'Sign in' }).click();
    await ownerPage.getByRole('heading', { level: 1, name: 'Enter your code' }).waitFor();
    assert.deepEqual(await axeViolations(ownerPage), [], 'code page');
    await screenshot(ownerPage, 'accounts-11-code-desktop');
    await ownerPage.getByLabel('Code from your authenticator app').fill(totpCode(secret, platformNow()));
    await ownerPage.getByRole('button', { name: 'Sign in' }).click();
    await ownerPage.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await goto(ownerPage, '/audit', 'Audit trail');
    await ownerPage.getByText('dev@equipe.example added an authenticator app as a second factor').first().waitFor();
    await ownerPage
      .getByText(/^dev@equipe\.example added key \S+$/)
      .first()
      .waitFor();
    await again.close();
    const verified = await platform.services.audit.verify();
    assert.equal(verified.ok, true);
  });
});
