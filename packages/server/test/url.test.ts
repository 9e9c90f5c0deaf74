/**
 * One URL rule wherever a URL is accepted: WHATWG-parsed, no control characters or whitespace,
 * a host, no credentials, no fragment, http(s) only (https only in production); what is stored
 * is the normalized URL, and that very URL is what a webhook is sent to and signed for.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { httpUrl, parseHttpUrl } from '../src/http/url.js';
import {
  count,
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { fund, payoutInput } from './money-harness.js';
import { type Receiver, startReceiver, verifyReceived } from './receiver.js';

/** Refused inputs, by class. */
const REFUSED: Record<string, string[]> = {
  'control characters or whitespace': [
    'https://shop.example/hook\n',
    ' https://shop.example/hook',
    'https://shop.example/hook ',
    'https://shop.example/a b',
    'https://shop.ex\tample/hook',
    'https://shop.example/\r\nX-Injected: 1',
    'https://shop.example/\u0000',
    'https://shop.example/\u007f',
    'https://shop.example/\u0085',
    'https://shop.example/\u00a0',
    'https://shop.example/\u2028',
    'https://shop.example/\ufeff',
  ],
  'not a URL': [
    '',
    'not a url',
    '/relative/path',
    'shop.example/hook',
    'https://',
    'http://[::1/',
    'https://sh%op.example/',
  ],
  'empty or missing host': [
    'https://:443/hook',
    'http:///',
    'https://?q=1',
    'https://#x',
    'https:',
    // The WHATWG parser makes each of these http(s)://x/ (RFC 9110 §4.2.1: must be rejected).
    'http:///x',
    'https:///x',
    'https:////x',
    'http://\\x',
    'http:x',
    'https:shop.example/x',
    'http:/x',
    'https:\\x',
  ],
  credentials: [
    'https://user@shop.example/hook',
    'https://user:secret@shop.example/hook',
    'https://:secret@shop.example/hook',
    'https://shop.example@evil.example/hook',
    'http://user%40x:p@shop.example/',
    'http://@shop.example/',
    'https://:@shop.example/',
  ],
  fragment: ['https://shop.example/hook#x', 'https://shop.example/hook#', 'https://shop.example/p?q=1#frag'],
  'scheme other than http(s)': [
    'ftp://shop.example/hook',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hello',
    'ws://shop.example/hook',
    'wss://shop.example/hook',
    'gopher://shop.example/hook',
    'mailto:ops@shop.example',
    'blob:https://shop.example/1',
  ],
};

/** Refused by length (the schema's limit, not the URL rule), as given and once normalized. */
const TOO_LONG = [`https://shop.example/${'a'.repeat(2048)}`, `https://shop.example/${'ü'.repeat(400)}`];

/** Accepted inputs and the normalized URL stored for each. */
const NORMALIZED: [input: string, stored: string][] = [
  ['https://shop.example/webhook/payment', 'https://shop.example/webhook/payment'],
  ['HTTPS://Shop.EXAMPLE:443/Hook?a=1', 'https://shop.example/Hook?a=1'],
  ['http://shop.example:80/x', 'http://shop.example/x'],
  ['https://shop.example', 'https://shop.example/'],
  ['https://shop.example/a/../b/./c', 'https://shop.example/b/c'],
  ['https://shop.example/%7Efoo/%2e%2E/bar', 'https://shop.example/bar'],
  ['https://shop.example\\hooks\\payment', 'https://shop.example/hooks/payment'],
  ['https://bücher.example/ünï?q=ç', 'https://xn--bcher-kva.example/%C3%BCn%C3%AF?q=%C3%A7'],
  ['https://shop.example/q?x="y"&z=<1>', 'https://shop.example/q?x=%22y%22&z=%3C1%3E'],
  ['https://shop.example:8443/h?', 'https://shop.example:8443/h?'],
  ['https://SHOP.example.:8443/h', 'https://shop.example.:8443/h'],
];

const allRefused = [
  ...Object.entries(REFUSED).flatMap(([kind, inputs]) => inputs.map((input) => [kind, input] as const)),
  ...TOO_LONG.map((input) => ['too long', input] as const),
];

describe('the URL rule', () => {
  for (const [kind, inputs] of Object.entries(REFUSED)) {
    it(`refuses ${inputs.length} inputs with ${kind}`, () => {
      for (const input of inputs) {
        const parsed = parseHttpUrl(input, { httpsOnly: false });
        assert.equal(parsed.ok, false, `${kind}: ${JSON.stringify(input)}`);
      }
    });
  }

  it('refuses http in production, allows it elsewhere', () => {
    assert.equal(parseHttpUrl('http://shop.example/', { httpsOnly: true }).ok, false);
    assert.equal(parseHttpUrl('https://shop.example/', { httpsOnly: true }).ok, true);
    assert.equal(parseHttpUrl('http://shop.example/', { httpsOnly: false }).ok, true);
  });

  it(`normalizes ${NORMALIZED.length} inputs to new URL(x).href, and that href is stable`, () => {
    for (const [input, stored] of NORMALIZED) {
      const parsed = parseHttpUrl(input, { httpsOnly: false });
      assert.ok(parsed.ok, input);
      assert.equal(parsed.url.href, stored, input);
      const again = parseHttpUrl(stored, { httpsOnly: false });
      assert.ok(again.ok && again.url.href === stored, stored);
    }
  });
});

describe('a URL schema keeps its verdicts', () => {
  it('judges each input once, and answers a second parse as the first, refusals with their reason', () => {
    const judged: string[] = [];
    const schema = httpUrl({
      httpsOnly: false,
      maxLength: 2048,
      refuse: (url) => {
        judged.push(url.href);
        return url.hostname === 'refused.example' ? 'must not point there' : undefined;
      },
    });
    for (let round = 0; round < 3; round++) {
      const kept = schema.safeParse('https://SHOP.example/hook?a=1');
      assert.ok(kept.success);
      assert.equal(kept.data, 'https://shop.example/hook?a=1');
      const refused = schema.safeParse('https://refused.example/hook');
      assert.equal(refused.success, false);
      assert.equal(refused.error?.issues[0]?.message, 'must not point there');
      const malformed = schema.safeParse('not-a-url');
      assert.equal(malformed.success, false);
      assert.equal(malformed.error?.issues[0]?.message, 'is not an absolute URL');
    }
    assert.deepEqual(judged, ['https://shop.example/hook?a=1', 'https://refused.example/hook']);
  });
});

describe('PAYGATE_PUBLIC_URL follows the same rule', () => {
  // An empty variable counts as unset; the length limit is the same but not the point here.
  const refused = allRefused.filter(([kind, input]) => kind !== 'too long' && input !== '');
  it(`refuses each of the ${refused.length} refused URLs at start-up`, () => {
    for (const [kind, input] of refused) {
      assert.throws(() => parseConfig({ PAYGATE_PUBLIC_URL: input }), ConfigError, `${kind}: ${JSON.stringify(input)}`);
    }
  });

  it('keeps the normalized URL, without a trailing slash', () => {
    const config = parseConfig({ PAYGATE_PUBLIC_URL: 'HTTPS://Pay.Example:443/gate/./' });
    assert.equal(config.publicUrl, 'https://pay.example/gate');
  });
});

for (const database of databases()) {
  describe(`webhookUrl through the API (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let receiver: Receiver;
    before(async () => {
      // No real DNS in tests: every name is unknown (merchant.example deliveries just fail).
      platform = await startTestPlatform({
        database,
        webhooks: {
          resolve: async (hostname) => {
            throw new Error(`ENOTFOUND ${hostname}`);
          },
        },
      });
      merchant = await createMerchant(platform);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await platform.close();
    });

    const assertRefused = (
      input: string,
      response: { status: number; body: { msg: string; errors?: { field: string }[] } },
    ) => {
      assert.equal(response.status, 400, `${JSON.stringify(input)}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.msg, 'VALIDATION_FAILED');
      assert.deepEqual(
        response.body.errors?.map((e) => e.field),
        ['webhookUrl'],
        JSON.stringify(input),
      );
    };

    it(`refuses all ${allRefused.length} refused inputs at payment and payout create, creating nothing`, async () => {
      const payments = await count(platform, 'payments');
      const payouts = await count(platform, 'payouts');
      for (const [, webhookUrl] of allRefused) {
        assertRefused(webhookUrl, await post(platform, merchant, '/api/v1/payments', paymentInput({ webhookUrl })));
        assertRefused(webhookUrl, await post(platform, merchant, '/api/v1/payouts', payoutInput({ webhookUrl })));
      }
      assert.equal(await count(platform, 'payments'), payments);
      assert.equal(await count(platform, 'payouts'), payouts);
    });

    it('refuses an empty host as returnUrl too, naming returnUrl, creating nothing', async () => {
      const payments = await count(platform, 'payments');
      for (const returnUrl of REFUSED['empty or missing host'] ?? []) {
        const response = await post<unknown>(platform, merchant, '/api/v1/payments', paymentInput({ returnUrl }));
        assert.equal(response.status, 400, `${JSON.stringify(returnUrl)}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.msg, 'VALIDATION_FAILED');
        assert.deepEqual(
          response.body.errors?.map((e) => e.field),
          ['returnUrl'],
          JSON.stringify(returnUrl),
        );
      }
      assert.equal(await count(platform, 'payments'), payments);
    });

    it('refuses them at payment and payout update, changing nothing', async () => {
      const payment = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      await fund(platform, merchant, '500.00');
      const payout = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      for (const [, webhookUrl] of allRefused) {
        const paymentNo = payment.body.data?.orderNo;
        assertRefused(
          webhookUrl,
          await post(platform, merchant, '/api/v1/payments/update', { orderNo: paymentNo, webhookUrl }),
        );
        const payoutNo = payout.body.data?.orderNo;
        assertRefused(
          webhookUrl,
          await post(platform, merchant, '/api/v1/payouts/update', { orderNo: payoutNo, webhookUrl }),
        );
      }
      const stored = await platform.services.db.query<{ webhook_url: string }>(
        `SELECT webhook_url FROM payments WHERE order_no = $1
         UNION ALL SELECT webhook_url FROM payouts WHERE order_no = $2`,
        [payment.body.data?.orderNo, payout.body.data?.orderNo],
      );
      assert.deepEqual(
        stored.rows.map((r) => r.webhook_url),
        ['https://merchant.example/webhook/payment', 'https://merchant.example/webhook/payout'],
      );
    });

    it(`stores and answers the normalized URL (${NORMALIZED.length} inputs) at create and update`, async () => {
      await fund(platform, merchant, '5000.00');
      for (const [input, normalized] of NORMALIZED) {
        const payment = await post<{ orderNo: string; webhookUrl: string }>(
          platform,
          merchant,
          '/api/v1/payments',
          paymentInput({ webhookUrl: input }),
        );
        assert.equal(payment.status, 200, `${input}: ${JSON.stringify(payment.body)}`);
        assert.equal(payment.body.data?.webhookUrl, normalized, input);
        const payout = await post<{ orderNo: string; webhookUrl: string }>(
          platform,
          merchant,
          '/api/v1/payouts',
          payoutInput({ webhookUrl: input }),
        );
        assert.equal(payout.status, 200, `${input}: ${JSON.stringify(payout.body)}`);
        assert.equal(payout.body.data?.webhookUrl, normalized, input);
        const updatedPayment = await post<{ webhookUrl: string }>(platform, merchant, '/api/v1/payments/update', {
          orderNo: payment.body.data?.orderNo,
          webhookUrl: input,
        });
        assert.equal(updatedPayment.body.data?.webhookUrl, normalized, input);
        const updatedPayout = await post<{ webhookUrl: string }>(platform, merchant, '/api/v1/payouts/update', {
          orderNo: payout.body.data?.orderNo,
          webhookUrl: input,
        });
        assert.equal(updatedPayout.body.data?.webhookUrl, normalized, input);
        const stored = await platform.services.db.query<{ webhook_url: string }>(
          `SELECT webhook_url FROM payments WHERE order_no = $1
           UNION ALL SELECT webhook_url FROM payouts WHERE order_no = $2`,
          [payment.body.data?.orderNo, payout.body.data?.orderNo],
        );
        assert.deepEqual(
          stored.rows.map((r) => r.webhook_url),
          [normalized, normalized],
          input,
        );
      }
    });

    it('sends the webhook to the normalized URL and signs exactly its @path and @query', async () => {
      const port = new URL(receiver.url).port;
      const input = `HTTP://127.0.0.1:${port}/a/../hooks/./payment?order=ü&x="1"`;
      const normalized = `http://127.0.0.1:${port}/hooks/payment?order=%C3%BC&x=%221%22`;
      const created = await post<{ orderNo: string; webhookUrl: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ webhookUrl: input }),
      );
      assert.equal(created.body.data?.webhookUrl, normalized);
      const orderNo = created.body.data?.orderNo as string;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'FAILED' });
      const before = receiver.received.length;
      while ((await platform.services.webhooks.deliverNext('w')) !== 'idle') {
        // deliver every pending event (funding above queued some to merchant.example, refused)
      }
      const request = receiver.received.slice(before).find((r) => r.body.toString().includes(orderNo));
      assert.ok(request, 'the webhook arrived');
      assert.equal(request.path, '/hooks/payment');
      assert.equal(request.query, 'order=%C3%BC&x=%221%22');
      const verified = await verifyReceived(request, merchant.webhookKeys, platform.services.now());
      assert.ok(verified.ok, JSON.stringify(verified));
    });
  });
}
