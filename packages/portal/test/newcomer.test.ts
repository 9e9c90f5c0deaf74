/**
 * What a newcomer meets in the portal (issue 46), in Chromium at a phone's 320 px and at desktop
 * width: the setup link signs the person in (through the second factor's set-up when the merchant
 * requires one); the audit trail reads as sentences, with each raw entry one click away and its
 * action filter a list; every time shown names its zone; the sandbox's refused requests are
 * called that; payments have their CSV report beside the payouts', for owner and finance.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { generateSigningKey } from '@paygate/protocol';
import type { Browser, Page } from 'playwright-core';
import {
  createMerchant,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from '../../server/test/harness.js';
import { invite, PASSWORD, portalUser } from '../../server/test/portal-harness.js';
import { axeViolations, ensurePortalBuilt, launchChromium, screenshot, SKIP_BROWSER } from './browser.js';

const WIDTHS = [
  { name: 'phone', width: 320, height: 640 },
  { name: 'desktop', width: 1280, height: 900 },
] as const;

describe('the portal for a newcomer in Chromium', { skip: SKIP_BROWSER }, () => {
  let platform: TestPlatform;
  let browser: Browser;
  let shop: TestMerchant;
  let owner: { email: string; password: string };
  let orderNo: string;

  before(async () => {
    browser = await launchChromium();
    ensurePortalBuilt();
    platform = await startTestPlatform();
    shop = await createMerchant(platform, 'Loja Nova');
    owner = await portalUser(platform, shop);
    const created = await post<{ orderNo: string }>(platform, shop, '/api/v1/payments', paymentInput());
    orderNo = created.body.data?.orderNo as string;
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  const page = async (width: number, height: number, timezoneId = 'America/Sao_Paulo'): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width, height }, locale: 'en-US', timezoneId });
    const opened = await context.newPage();
    opened.setDefaultTimeout(10_000);
    return opened;
  };

  const signIn = async (width: number, height: number, user = owner): Promise<Page> => {
    const opened = await page(width, height);
    await opened.goto(`${platform.url}/portal/`);
    await opened.getByLabel('Email').fill(user.email);
    await opened.getByLabel('Password').fill(user.password);
    await opened.getByRole('button', { name: 'Sign in' }).click();
    await opened.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    return opened;
  };

  const goto = async (opened: Page, path: string, heading: string | RegExp) => {
    await opened.goto(`${platform.url}/portal${path}`);
    await opened.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  const setupLink = async (email: string, role = 'developer') => {
    const { token } = await invite(platform, shop.accessKey, email, role);
    return `${platform.url}/portal/setup#token=${token}`;
  };

  const setPassword = async (opened: Page) => {
    await opened.getByLabel('New password').fill(PASSWORD);
    await opened.getByLabel('Repeat the password').fill(PASSWORD);
    await opened.getByRole('button', { name: 'Set password' }).click();
  };

  for (const { name, width, height } of WIDTHS) {
    it(`the setup link signs the person in, without a second sign-in (${name})`, async () => {
      const opened = await page(width, height);
      await opened.goto(await setupLink(`dev-${name}@nova.example`));
      await setPassword(opened);
      await opened.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.equal(new URL(opened.url()).hash, '', 'the one-time token is gone');
      assert.equal(await opened.getByRole('heading', { name: 'Sign in to the merchant portal' }).count(), 0);
      await opened.context().close();
    });
  }

  it('where the merchant requires a second factor, the setup link goes to its set-up first, then in (320 px)', async () => {
    await platform.services.db.query(
      `INSERT INTO portal_merchant_settings (merchant_id, require_second_factor, updated_at)
       SELECT id, true, now() FROM merchants WHERE access_key = $1
       ON CONFLICT (merchant_id) DO UPDATE SET require_second_factor = true`,
      [shop.accessKey],
    );
    try {
      const opened = await page(320, 640);
      await opened.goto(await setupLink('second@nova.example'));
      await setPassword(opened);
      await opened.getByRole('heading', { level: 1, name: 'Set up a second factor' }).waitFor();
      assert.equal(await opened.getByRole('heading', { name: 'Sign in to the merchant portal' }).count(), 0);
      assert.deepEqual(await axeViolations(opened), [], 'second factor set-up after the setup link');
      await screenshot(opened, 'newcomer-01-setup-second-factor-phone');
      await opened.context().close();
    } finally {
      await platform.services.db.query(
        `UPDATE portal_merchant_settings SET require_second_factor = false
         WHERE merchant_id = (SELECT id FROM merchants WHERE access_key = $1)`,
        [shop.accessKey],
      );
    }
  });

  for (const { name, width, height } of WIDTHS) {
    it(`the audit trail reads as sentences, the raw entry one click away, the action filter a list (${name})`, async () => {
      const opened = await signIn(width, height);
      await goto(opened, '/audit', 'Audit trail');
      // The operator invited them (paygate user invite): the sentence says so.
      const invited = opened.getByText(`A platform operator invited dev-${name}@nova.example as developer`);
      await invited.waitFor();
      // The raw entry: closed at first, opened by its summary, the JSON the server answered.
      const row = opened.locator('tr', { has: invited });
      const raw = row.locator('details');
      assert.equal(await raw.getAttribute('open'), null);
      await row.locator('summary').click();
      const json = JSON.parse((await row.locator('details pre').textContent()) ?? '{}') as Record<string, unknown>;
      assert.equal(json.action, 'person.invited');
      assert.equal(json.object, `dev-${name}@nova.example`);
      // The action filter: a list of the actions, by name.
      const filter = opened.getByLabel('Action');
      assert.equal(await filter.evaluate((element) => element.tagName), 'SELECT');
      const labels = await filter.locator('option').allTextContents();
      assert.ok(labels.includes('All actions') && labels.includes('Key retired') && labels.includes('Person invited'));
      await filter.selectOption({ label: 'Person invited' });
      await opened.getByRole('button', { name: 'Filter' }).click();
      await opened.waitForURL(/action=person\.invited/);
      await invited.waitFor();
      // The filtered page replaces the whole list once it is read: no sign-in is left in it.
      await opened.getByText(`${owner.email} signed in`).first().waitFor({ state: 'detached' });
      assert.equal(await opened.getByText(`${owner.email} signed in`).count(), 0);
      assert.deepEqual(await axeViolations(opened), [], 'audit page');
      const scroll = await opened.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(scroll <= width, `no sideways scrolling (${scroll}px at ${width}px)`);
      await screenshot(opened, `newcomer-02-audit-${name}`);
      await opened.context().close();
    });
  }

  it('an audit entry of a retired key reads "<email> retired key <id>"', async () => {
    const opened = await signIn(1280, 900);
    await goto(opened, '/credentials', 'Credentials');
    // A key whose first characters hold a '+' (as about one in six do): the row is found by them as text.
    let publicKey: string;
    do publicKey = Buffer.from(generateSigningKey().publicKey).toString('base64');
    while (!publicKey.slice(0, 12).includes('+'));
    await opened.getByLabel('Add a public key').fill(publicKey);
    await opened.getByRole('button', { name: 'Upload key' }).click();
    await opened.getByText('Public key added.').waitFor();
    await opened.getByRole('button', { name: `Retire key ${publicKey.slice(0, 12)}…` }).click();
    await opened
      // The key's start as text: base64 holds '+' and '/', which a RegExp would read as syntax.
      .getByRole('row', { name: publicKey.slice(0, 12) })
      .getByText('retired')
      .waitFor();
    const keyId = await opened.evaluate(async (key) => {
      const answer = (await (await fetch('/portal/api/credentials')).json()) as {
        data: { publicKeys: { id: string; publicKey: string }[] };
      };
      return answer.data.publicKeys.find((listed) => listed.publicKey === key)?.id;
    }, publicKey);
    assert.ok(keyId);
    await goto(opened, '/audit', 'Audit trail');
    await opened.getByText(`${owner.email} retired key ${keyId}`).waitFor();
    await opened.getByText(`${owner.email} added key ${keyId}`).waitFor();
    await opened.context().close();
  });

  for (const { name, width, height } of WIDTHS) {
    it(`every time shown names its zone, the UTC instant on hover (${name})`, async () => {
      const opened = await signIn(width, height);
      for (const [path, heading] of [
        ['/payments', 'Payments'],
        [`/payments/${orderNo}`, `Payment ${orderNo}`],
        ['/audit', 'Audit trail'],
        ['/people', 'People'],
        ['/account', 'Your account'],
        ['/credentials', 'Credentials'],
      ] as const) {
        await goto(opened, path, heading);
        const times = opened.locator('time');
        await times.first().waitFor({ state: 'attached' });
        const shown = await times.evaluateAll((elements) =>
          elements.map((element) => ({
            text: element.textContent ?? '',
            title: element.getAttribute('title') ?? '',
            dateTime: element.getAttribute('datetime') ?? '',
          })),
        );
        assert.ok(shown.length > 0, `${path} shows times`);
        for (const time of shown) {
          // America/Sao_Paulo in en-US: "GMT-3".
          assert.match(time.text, /GMT-3$/, `${path}: ${time.text} names its zone`);
          assert.match(time.title, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(UTC\)$/, `${path}: the UTC instant`);
          assert.equal(time.title.slice(0, 24), time.dateTime);
        }
      }
      await screenshot(opened, `newcomer-03-payment-${name}`);
      await opened.context().close();
    });
  }

  for (const { name, width, height } of WIDTHS) {
    it(`the menu calls the sandbox's 401s "Refused requests"; payments have a CSV report for owner and finance (${name})`, async () => {
      const opened = await signIn(width, height);
      const menu = opened.getByRole('button', { name: /menu/i });
      if (await menu.isVisible()) await menu.click();
      assert.equal(await opened.getByRole('link', { name: 'Rejected', exact: true }).count(), 0);
      await opened.getByRole('link', { name: 'Refused requests', exact: true }).click();
      await opened.getByRole('heading', { level: 1, name: 'Refused requests' }).waitFor();
      await goto(opened, '/payments', 'Payments');
      const report = opened.getByRole('link', { name: 'Download the payments report (CSV)' });
      assert.equal(await report.getAttribute('href'), '/portal/api/payments/report.csv');
      const csv = await opened.evaluate(async (href) => {
        const answer = await fetch(href);
        return { status: answer.status, text: await answer.text() };
      }, '/portal/api/payments/report.csv');
      assert.equal(csv.status, 200);
      assert.ok(csv.text.includes(orderNo));
      assert.deepEqual(await axeViolations(opened), [], 'payments with the report link');
      await opened.context().close();
    });
  }

  it('the payments report link is shown to finance and not to a viewer', async () => {
    for (const [role, shown] of [
      ['finance', 1],
      ['viewer', 0],
    ] as const) {
      const person = await portalUser(platform, shop, PASSWORD, role);
      const opened = await signIn(1280, 900, person);
      await goto(opened, '/payments', 'Payments');
      await opened.getByRole('link', { name: orderNo }).waitFor();
      assert.equal(await opened.getByRole('link', { name: 'Download the payments report (CSV)' }).count(), shown, role);
      await opened.context().close();
    }
  });
});
