/**
 * The SSRF guard on webhook URLs: every kind of non-public address is refused (by literal, by a
 * DNS name that resolves to one, in IPv4-mapped form), and with PAYGATE_WEBHOOK_ALLOW_PRIVATE off
 * a delivery to loopback sends nothing and records why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DestinationRefused,
  isPublicAddress,
  type Resolver,
  resolveDestination,
} from '../src/modules/webhooks/destination.js';
import { createMerchant, paymentInput, post, startTestPlatform, type TestPlatform } from './harness.js';
import { type Receiver, startReceiver } from './receiver.js';

const NON_PUBLIC: [kind: string, address: string][] = [
  ['IPv4 loopback', '127.0.0.1'],
  ['IPv4 loopback, elsewhere in 127/8', '127.8.9.10'],
  ['IPv6 loopback', '::1'],
  ['private 10/8', '10.1.2.3'],
  ['private 172.16/12', '172.20.0.5'],
  ['private 192.168/16', '192.168.1.1'],
  ['link-local', '169.254.10.10'],
  ['IPv6 link-local', 'fe80::1'],
  ['CGNAT 100.64/10', '100.100.1.1'],
  ['IPv4 multicast', '224.0.0.251'],
  ['IPv6 multicast', 'ff02::1'],
  ['IPv4 unspecified', '0.0.0.0'],
  ['IPv6 unspecified', '::'],
  ['broadcast', '255.255.255.255'],
  ['IPv6 unique local', 'fd12:3456::1'],
  ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['IPv4-mapped private', '::ffff:10.0.0.1'],
  ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
  ['AWS/GCP/Azure metadata', '169.254.169.254'],
  ['AWS metadata over IPv6', 'fd00:ec2::254'],
  ['Alibaba metadata', '100.100.100.200'],
  ['documentation range', '192.0.2.10'],
  ['benchmarking range', '198.18.0.1'],
  ['former class E', '240.1.2.3'],
  ['IPv6 documentation', '2001:db8::1'],
  ['6to4 embedding a private address', '2002:c0a8:101::1'],
  ['NAT64 embedding loopback', '64:ff9b::7f00:1'],
];

const strict = { allowPrivate: false, httpsOnly: false };

/** A resolver answering from a table, as DNS would (tests must not depend on real DNS). */
const table =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('SSRF guard', () => {
  for (const [kind, address] of NON_PUBLIC) {
    it(`refuses ${kind} (${address}) as a literal and through DNS`, async () => {
      assert.equal(isPublicAddress(address), false);
      const literal = address.includes(':') ? `[${address}]` : address;
      await assert.rejects(resolveDestination(`https://${literal}/hook`, strict), DestinationRefused);
      await assert.rejects(
        resolveDestination('https://hooks.shop.example/hook', {
          ...strict,
          resolve: table({ 'hooks.shop.example': [address] }),
        }),
        DestinationRefused,
      );
    });
  }

  it('refuses loopback written the ways URL parsers accept (decimal, hex, short forms, localhost)', async () => {
    for (const url of ['http://2130706433/', 'http://0x7f.0.0.1/', 'http://127.1/', 'http://[::ffff:7f00:1]/']) {
      await assert.rejects(resolveDestination(url, strict), DestinationRefused, url);
    }
    await assert.rejects(
      resolveDestination('http://localhost/', { ...strict, resolve: table({ localhost: ['127.0.0.1', '::1'] }) }),
      DestinationRefused,
    );
  });

  it('refuses a name with any non-public address among public ones (no rebinding through a second answer)', async () => {
    const resolve = table({ 'mixed.example': ['93.184.216.34', '10.0.0.7'] });
    await assert.rejects(resolveDestination('https://mixed.example/', { ...strict, resolve }), DestinationRefused);
  });

  it('pins the connection to the checked public address', async () => {
    const resolve = table({ 'shop.example': ['93.184.216.34'] });
    const destination = await resolveDestination('https://shop.example:8443/hook?a=1', { ...strict, resolve });
    assert.equal(destination.address, '93.184.216.34');
    assert.equal(destination.family, 4);
    assert.equal(destination.url.hostname, 'shop.example');
  });

  it('allows only http(s), only https in production, and no credentials in the URL', async () => {
    const resolve = table({ 'shop.example': ['93.184.216.34'] });
    for (const url of ['ftp://shop.example/', 'file:///etc/passwd', 'gopher://shop.example/', 'not a url']) {
      await assert.rejects(resolveDestination(url, { ...strict, resolve }), DestinationRefused, url);
    }
    await assert.rejects(
      resolveDestination('http://shop.example/', { allowPrivate: false, httpsOnly: true, resolve }),
      DestinationRefused,
    );
    await assert.rejects(
      resolveDestination('https://user:secret@shop.example/', { ...strict, resolve }),
      DestinationRefused,
    );
    assert.ok(await resolveDestination('http://shop.example/', { ...strict, resolve }));
  });

  it('allows loopback and private addresses when PAYGATE_WEBHOOK_ALLOW_PRIVATE is on', async () => {
    const destination = await resolveDestination('http://127.0.0.1:9/hook', { allowPrivate: true, httpsOnly: false });
    assert.equal(destination.address, '127.0.0.1');
  });

  it('a public address passes', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });
});

describe('deliveries with private addresses refused', () => {
  let platform: TestPlatform;
  let receiver: Receiver;
  before(async () => {
    platform = await startTestPlatform({
      env: { PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'false' },
      webhooks: { resolve: table({ 'rebind.example': ['127.0.0.1'] }) },
    });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await platform.close();
  });

  it('sends nothing to loopback, by address or by a name resolving to it, and records why', async () => {
    const merchant = await createMerchant(platform);
    const port = new URL(receiver.url).port;
    for (const webhookUrl of [`${receiver.url}/hook`, `http://rebind.example:${port}/hook`]) {
      const created = await post<{ orderNo: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ webhookUrl }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const orderNo = created.body.data?.orderNo as string;
      await post(platform, merchant, '/api/v1/sandbox/payments/simulate', { orderNo, status: 'FAILED' });
    }
    assert.equal(await platform.services.webhooks.deliverNext('w'), 'retry');
    assert.equal(await platform.services.webhooks.deliverNext('w'), 'retry');
    assert.equal(receiver.received.length, 0);
    const attempts = await platform.services.db.query<{ error: string; status_code: number | null }>(
      'SELECT error, status_code FROM delivery_attempts ORDER BY id',
    );
    assert.equal(attempts.rows.length, 2);
    for (const attempt of attempts.rows) {
      assert.equal(attempt.status_code, null);
      assert.match(attempt.error, /^destination refused: /);
    }
  });
});
