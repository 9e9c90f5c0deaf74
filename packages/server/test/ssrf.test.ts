/**
 * The SSRF guard on webhook URLs is an allow-list: only global unicast addresses pass. Every
 * address the IANA special-purpose registries mark as not globally reachable is refused, every
 * IPv6 form that carries an IPv4 address is judged by that IPv4 address, and the same rule
 * applies to an IP literal at create and update and to every resolved address at connect time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  cachingResolver,
  DestinationRefused,
  DNS_CACHE_MS,
  isGlobalUnicast,
  type Resolver,
  refusedHost,
  resolveDestination,
} from '../src/http/ssrf.js';
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
import { type Receiver, startReceiver } from './receiver.js';

/** IPv4 addresses that are not global unicast, one or more per registry block. */
const IPV4_REFUSED: [kind: string, address: string][] = [
  ['0/8 "this network"', '0.0.0.0'],
  ['0/8 "this network"', '0.1.2.3'],
  ['10/8 private', '10.1.2.3'],
  ['100.64/10 shared (CGNAT)', '100.64.0.1'],
  ['100.64/10 shared (CGNAT), Alibaba metadata', '100.100.100.200'],
  ['100.64/10 shared (CGNAT), top', '100.127.255.254'],
  ['127/8 loopback', '127.0.0.1'],
  ['127/8 loopback', '127.8.9.10'],
  ['169.254/16 link-local', '169.254.10.10'],
  ['169.254/16 link-local, cloud metadata', '169.254.169.254'],
  ['172.16/12 private', '172.16.0.1'],
  ['172.16/12 private, top', '172.31.255.255'],
  ['192.0.0/24 IETF protocol assignments', '192.0.0.1'],
  ['192.0.0.8/32 IPv4 dummy address', '192.0.0.8'],
  ['192.0.0.170/32 NAT64 discovery', '192.0.0.170'],
  ['192.0.2/24 TEST-NET-1', '192.0.2.10'],
  ['192.88.99/24 6to4 relay anycast (deprecated)', '192.88.99.1'],
  ['192.168/16 private', '192.168.1.1'],
  ['198.18/15 benchmarking', '198.18.0.1'],
  ['198.18/15 benchmarking, top', '198.19.255.255'],
  ['198.51.100/24 TEST-NET-2', '198.51.100.7'],
  ['203.0.113/24 TEST-NET-3', '203.0.113.9'],
  ['224/4 multicast', '224.0.0.251'],
  ['224/4 multicast', '239.255.255.250'],
  ['240/4 reserved', '240.1.2.3'],
  ['255.255.255.255 limited broadcast', '255.255.255.255'],
];

/** IPv6 addresses that are not global unicast (no IPv4 address carried). */
const IPV6_REFUSED: [kind: string, address: string][] = [
  ['::/128 unspecified', '::'],
  ['::1/128 loopback', '::1'],
  ['fc00::/7 unique local', 'fc00::1'],
  ['fc00::/7 unique local', 'fd12:3456::1'],
  ['fc00::/7 unique local, AWS metadata', 'fd00:ec2::254'],
  ['fe80::/10 link-local', 'fe80::1'],
  ['fec0::/10 site-local (deprecated)', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
  ['ff00::/8 multicast, global scope', 'ff0e::1'],
  ['2001:db8::/32 documentation', '2001:db8::1'],
  ['3fff::/20 documentation', '3fff::1'],
  ['3fff::/20 documentation, top', '3fff:fff:ffff::1'],
  ['2001::/23 IETF protocol assignments', '2001:5::1'],
  ['2001::/23, 2001:1::/32 outside the anycast addresses', '2001:1::4'],
  ['2001:2::/48 benchmarking', '2001:2::1'],
  ['2001:10::/28 ORCHID (deprecated)', '2001:10::1'],
  ['100::/64 discard-only', '100::1'],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::1'],
  ['5f00::/16 SRv6 SIDs', '5f00::1'],
  ['64:ff9b:1::/48 local-use NAT64, private IPv4', '64:ff9b:1::a00:1'],
  ['64:ff9b:1::/48 local-use NAT64, even with a public IPv4', '64:ff9b:1::808:808'],
  ['outside 2000::/3', '4000::1'],
  ['outside 2000::/3', '1000::1'],
  ['outside 2000::/3', 'e000::1'],
];

/** Private IPv4 addresses carried in each IPv6 embedding form: refused. */
const EMBEDDED_PRIVATE: [kind: string, address: string][] = [
  ['IPv4-mapped ::ffff:0:0/96, loopback', '::ffff:127.0.0.1'],
  ['IPv4-mapped ::ffff:0:0/96, loopback in hex', '::ffff:7f00:1'],
  ['IPv4-mapped ::ffff:0:0/96, metadata', '::ffff:169.254.169.254'],
  ['IPv4-mapped ::ffff:0:0/96, private', '::ffff:10.0.0.1'],
  ['IPv4-compatible ::/96, loopback', '::127.0.0.1'],
  ['IPv4-compatible ::/96, private', '::192.168.1.1'],
  ['IPv4-translated ::ffff:0:0:0/96, loopback', '::ffff:0:127.0.0.1'],
  ['IPv4-translated ::ffff:0:0:0/96, private', '::ffff:0:10.0.0.1'],
  ['NAT64 64:ff9b::/96, loopback', '64:ff9b::7f00:1'],
  ['NAT64 64:ff9b::/96, metadata', '64:ff9b::169.254.169.254'],
  ['NAT64 64:ff9b::/96, private', '64:ff9b::192.168.1.1'],
  ['6to4 2002::/16, loopback', '2002:7f00:1::1'],
  ['6to4 2002::/16, private', '2002:c0a8:101::1'],
  ['6to4 2002::/16, metadata', '2002:a9fe:a9fe::'],
  ['Teredo 2001::/32, private server', '2001:0:a00:1:8000:f227:f7f7:f7f7'],
  ['Teredo 2001::/32, loopback client (obfuscated)', '2001:0:808:808:8000:f227:80ff:fffe'],
  ['ISATAP interface id 0:5efe, private', '2600:1f18::5efe:10.0.0.1'],
  ['ISATAP interface id 200:5efe, private', '2600:1f18::200:5efe:192.168.1.1'],
  ['ISATAP with a link-local prefix and a public IPv4', 'fe80::200:5efe:8.8.8.8'],
];

/** Public IPv4 addresses carried in each IPv6 embedding form: judged by them, so they pass. */
const EMBEDDED_PUBLIC: [kind: string, address: string][] = [
  ['IPv4-mapped ::ffff:0:0/96', '::ffff:93.184.216.34'],
  ['IPv4-mapped ::ffff:0:0/96, hex', '::ffff:808:808'],
  ['IPv4-compatible ::/96', '::8.8.8.8'],
  ['IPv4-translated ::ffff:0:0:0/96', '::ffff:0:8.8.8.8'],
  ['NAT64 64:ff9b::/96', '64:ff9b::93.184.216.34'],
  ['6to4 2002::/16', '2002:808:808::1'],
  ['Teredo 2001::/32', '2001:0:808:808:8000:f227:a247:27dd'],
  ['ISATAP interface id 200:5efe', '2600:1f18::200:5efe:8.8.8.8'],
];

/** Global unicast addresses, including the registry's globally reachable exceptions: pass. */
const GLOBAL: [kind: string, address: string][] = [
  ['public IPv4', '8.8.8.8'],
  ['public IPv4', '93.184.216.34'],
  ['just below 100.64/10', '100.63.255.255'],
  ['just above 100.64/10', '100.128.0.1'],
  ['just below 172.16/12', '172.15.255.255'],
  ['just above 172.16/12', '172.32.0.1'],
  ['just above 198.18/15', '198.20.0.1'],
  ['just below 224/4', '223.255.255.255'],
  ['192.0.0.9/32 PCP anycast (registry: globally reachable)', '192.0.0.9'],
  ['192.0.0.10/32 TURN anycast (registry: globally reachable)', '192.0.0.10'],
  ['192.31.196/24 AS112-v4', '192.31.196.1'],
  ['192.52.193/24 AMT', '192.52.193.1'],
  ['192.175.48/24 AS112 direct delegation', '192.175.48.1'],
  ['public IPv6', '2606:2800:220:1:248:1893:25c8:1946'],
  ['public IPv6', '2001:4860:4860::8888'],
  ['2001:1::1/128 PCP anycast', '2001:1::1'],
  ['2001:1::2/128 TURN anycast', '2001:1::2'],
  ['2001:1::3/128 DNS-SD SRP anycast', '2001:1::3'],
  ['2001:3::/32 AMT', '2001:3::1'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::1'],
  ['2001:20::/28 ORCHIDv2', '2001:20::1'],
  ['2001:30::/28 drone remote ID', '2001:30::1'],
  ['just above 2001::/23', '2001:200::1'],
  ['2620:4f:8000::/48 AS112 direct delegation', '2620:4f:8000::1'],
  ['just above 3fff::/20', '3fff:1000::1'],
];

const REFUSED = [...IPV4_REFUSED, ...IPV6_REFUSED, ...EMBEDDED_PRIVATE];
const PASSING = [...EMBEDDED_PUBLIC, ...GLOBAL];

const strict = { allowPrivate: false, httpsOnly: false };

/** A resolver answering from a table, as DNS would (tests must not depend on real DNS). */
const table =
  (answers: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw new Error(`ENOTFOUND ${hostname}`);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

describe('SSRF guard: the allow-list', () => {
  it(`refuses each of ${REFUSED.length} non-global addresses: by the address, as a URL literal, and through DNS at connect time`, async () => {
    for (const [kind, address] of REFUSED) {
      assert.equal(isGlobalUnicast(address), false, `${kind} ${address}`);
      const url = new URL(`https://${literal(address)}/hook`);
      assert.ok(refusedHost(url), `${kind} ${address} as a literal at create`);
      await assert.rejects(resolveDestination(url.href, strict), DestinationRefused, `${kind} ${address} (literal)`);
      await assert.rejects(
        resolveDestination('https://hooks.shop.example/hook', {
          ...strict,
          resolve: table({ 'hooks.shop.example': [address] }),
        }),
        DestinationRefused,
        `${kind} ${address} (DNS)`,
      );
    }
  });

  it(`lets each of ${PASSING.length} global unicast addresses through, as a literal and through DNS`, async () => {
    for (const [kind, address] of PASSING) {
      assert.equal(isGlobalUnicast(address), true, `${kind} ${address}`);
      const url = new URL(`https://${literal(address)}/hook`);
      assert.equal(refusedHost(url), undefined, `${kind} ${address} as a literal at create`);
      const byLiteral = await resolveDestination(url.href, strict);
      assert.equal(byLiteral.address, url.hostname.replace(/^\[|\]$/g, ''));
      const byName = await resolveDestination('https://hooks.shop.example/hook', {
        ...strict,
        resolve: table({ 'hooks.shop.example': [address] }),
      });
      assert.equal(byName.address, address, `${kind} ${address} (DNS)`);
    }
  });

  it('refuses what is not an IP address at all, and addresses written the loose ways (octal, short)', () => {
    for (const text of ['', 'localhost', '1.2.3', '0x7f.1', '127.1', '010.0.0.1', '::ffff:1.2.3', 'fe80::1%eth0x']) {
      assert.equal(isGlobalUnicast(text), false, JSON.stringify(text));
    }
  });

  it('refuses loopback however a URL writes it (decimal, hex, short forms, localhost, trailing dot)', async () => {
    const urls = [
      'http://2130706433/',
      'http://0x7f.0.0.1/',
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://[::ffff:7f00:1]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://api.localhost/',
    ];
    for (const url of urls) {
      assert.ok(refusedHost(new URL(url)), url);
      await assert.rejects(resolveDestination(url, strict), DestinationRefused, url);
    }
  });

  it('judges a DNS name at connect time, not at create (its answer may change)', () => {
    assert.equal(refusedHost(new URL('https://rebind.example/hook')), undefined);
  });

  it('refuses a name with any non-global address among global ones (no rebinding through a second answer)', async () => {
    const resolve = table({ 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'mixed6.example': ['8.8.8.8', '::1'] });
    await assert.rejects(resolveDestination('https://mixed.example/', { ...strict, resolve }), DestinationRefused);
    await assert.rejects(resolveDestination('https://mixed6.example/', { ...strict, resolve }), DestinationRefused);
  });

  it('pins the connection to the checked global address', async () => {
    const resolve = table({ 'shop.example': ['93.184.216.34'] });
    const destination = await resolveDestination('https://shop.example:8443/hook?a=1', { ...strict, resolve });
    assert.equal(destination.address, '93.184.216.34');
    assert.equal(destination.family, 4);
    assert.equal(destination.url.hostname, 'shop.example');
  });

  it('applies the URL rule at connect time too (scheme, https only in production, credentials, fragment)', async () => {
    const resolve = table({ 'shop.example': ['93.184.216.34'] });
    for (const url of [
      'ftp://shop.example/',
      'file:///etc/passwd',
      'gopher://shop.example/',
      'not a url',
      'https://user:secret@shop.example/',
      'https://shop.example/#x',
      'https://shop.example/\n',
    ]) {
      await assert.rejects(resolveDestination(url, { ...strict, resolve }), DestinationRefused, url);
    }
    await assert.rejects(
      resolveDestination('http://shop.example/', { allowPrivate: false, httpsOnly: true, resolve }),
      DestinationRefused,
    );
    assert.ok(await resolveDestination('http://shop.example/', { ...strict, resolve }));
  });

  it('reuses a DNS answer briefly but checks it on every attempt: a name rebound to loopback is refused once it runs out', async () => {
    const answers: Record<string, string[]> = { 'shop.example': ['93.184.216.34'], 'lan.example': ['10.0.0.7'] };
    let lookups = 0;
    const dns: Resolver = async (hostname) => {
      lookups++;
      return table(answers)(hostname);
    };
    let clock = 1_000_000;
    const resolve = cachingResolver(dns, () => clock);
    const attempt = (url: string) => resolveDestination(url, { ...strict, resolve });

    assert.equal((await attempt('https://shop.example/hook')).address, '93.184.216.34');
    answers['shop.example'] = ['127.0.0.1']; // rebinding
    clock += DNS_CACHE_MS - 1;
    // Within the answer's time the connection still goes to the address checked, never elsewhere.
    assert.equal((await attempt('https://shop.example/other')).address, '93.184.216.34');
    assert.equal(lookups, 1, 'one lookup for both attempts');
    clock += 1;
    await assert.rejects(attempt('https://shop.example/hook'), DestinationRefused, 'the new answer is checked');
    await assert.rejects(attempt('https://shop.example/hook'), DestinationRefused, 'and stays refused');
    assert.equal(lookups, 2);

    // A cached private answer is refused on every attempt, not only the first.
    await assert.rejects(attempt('https://lan.example/'), DestinationRefused);
    await assert.rejects(attempt('https://lan.example/'), DestinationRefused);
    assert.equal(lookups, 3);

    // A failed lookup is not kept: the next attempt asks again.
    await assert.rejects(attempt('https://new.example/'), DestinationRefused);
    answers['new.example'] = ['8.8.8.8'];
    assert.equal((await attempt('https://new.example/')).address, '8.8.8.8');
    assert.equal(lookups, 5);
  });

  it('allows loopback and private addresses when PAYGATE_WEBHOOK_ALLOW_PRIVATE is on', async () => {
    const destination = await resolveDestination('http://127.0.0.1:9/hook', { allowPrivate: true, httpsOnly: false });
    assert.equal(destination.address, '127.0.0.1');
    const resolve = table({ 'lan.example': ['10.0.0.7'] });
    const byName = await resolveDestination('http://lan.example/', { allowPrivate: true, httpsOnly: false, resolve });
    assert.equal(byName.address, '10.0.0.7');
  });
});

for (const database of databases()) {
  describe(`webhookUrl to a non-global address through the API (${database})`, () => {
    let platform: TestPlatform;
    let open: TestPlatform;
    let merchant: TestMerchant;
    let openMerchant: TestMerchant;
    before(async () => {
      platform = await startTestPlatform({ database, env: { PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'false' } });
      open = await startTestPlatform({ database, env: { PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true' } });
      merchant = await createMerchant(platform);
      openMerchant = await createMerchant(open);
    });
    after(async () => {
      await platform.close();
      await open.close();
    });

    /** One literal per class: IPv4 private and metadata, IPv6 loopback and ULA, the embedding forms. */
    const refusedUrls = [
      'http://127.0.0.1:8080/hook',
      'http://2130706433/hook',
      'http://localhost/hook',
      'http://169.254.169.254/latest/meta-data',
      'https://10.0.0.1/hook',
      'https://[::1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[::ffff:192.168.1.1]/hook',
      'https://[64:ff9b::a9fe:a9fe]/hook',
      'https://[2002:c0a8:101::1]/hook',
      'https://[2001:0:a00:1:8000:f227:f7f7:f7f7]/hook',
      'https://[2001:db8::1]/hook',
    ];

    const assertRefused = (response: { status: number; body: { msg: string; errors?: { field: string }[] } }) => {
      assert.equal(response.status, 400, JSON.stringify(response.body));
      assert.equal(response.body.msg, 'VALIDATION_FAILED');
      assert.deepEqual(
        response.body.errors?.map((e) => e.field),
        ['webhookUrl'],
      );
    };

    it(`refuses ${refusedUrls.length} non-global literals at payment and payout create, creating nothing`, async () => {
      const payments = await count(platform, 'payments');
      const payouts = await count(platform, 'payouts');
      for (const webhookUrl of refusedUrls) {
        assertRefused(await post(platform, merchant, '/api/v1/payments', paymentInput({ webhookUrl })));
        assertRefused(await post(platform, merchant, '/api/v1/payouts', payoutInput({ webhookUrl })));
      }
      assert.equal(await count(platform, 'payments'), payments);
      assert.equal(await count(platform, 'payouts'), payouts);
    });

    it('refuses them at payment and payout update, changing nothing', async () => {
      const payment = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payments', paymentInput());
      assert.equal(payment.status, 200, JSON.stringify(payment.body));
      await fund(platform, merchant, '500.00');
      const payout = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
      assert.equal(payout.status, 200, JSON.stringify(payout.body));
      for (const webhookUrl of refusedUrls) {
        const orderNo = payment.body.data?.orderNo;
        assertRefused(await post(platform, merchant, '/api/v1/payments/update', { orderNo, webhookUrl }));
        const payoutNo = payout.body.data?.orderNo;
        assertRefused(await post(platform, merchant, '/api/v1/payouts/update', { orderNo: payoutNo, webhookUrl }));
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

    it('accepts them with PAYGATE_WEBHOOK_ALLOW_PRIVATE on (the sandbox default)', async () => {
      for (const webhookUrl of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'https://10.0.0.1/hook']) {
        const created = await post(open, openMerchant, '/api/v1/payments', paymentInput({ webhookUrl }));
        assert.equal(created.status, 200, `${webhookUrl}: ${JSON.stringify(created.body)}`);
      }
    });
  });
}

describe('deliveries to non-global addresses refused at connect time', () => {
  let platform: TestPlatform;
  let receiver: Receiver;
  before(async () => {
    platform = await startTestPlatform({
      env: { PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'false' },
      webhooks: {
        resolve: table({
          'rebind.example': ['127.0.0.1'],
          'mapped.example': ['::ffff:127.0.0.1'],
          'nat64.example': ['64:ff9b::7f00:1'],
        }),
      },
    });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await platform.close();
  });

  it('sends nothing to a name resolving to loopback (plain, IPv4-mapped, NAT64), and records why', async () => {
    const merchant = await createMerchant(platform);
    const port = new URL(receiver.url).port;
    const names = ['rebind.example', 'mapped.example', 'nat64.example'];
    for (const name of names) {
      const webhookUrl = `http://${name}:${port}/hook`;
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
    for (const _ of names) assert.equal(await platform.services.webhooks.deliverNext('w'), 'retry');
    assert.equal(receiver.received.length, 0);
    const attempts = await platform.services.db.query<{ error: string; status_code: number | null }>(
      'SELECT error, status_code FROM delivery_attempts ORDER BY id',
    );
    assert.equal(attempts.rows.length, names.length);
    for (const attempt of attempts.rows) {
      assert.equal(attempt.status_code, null);
      assert.match(attempt.error, /^destination refused: /);
    }
  });

  it('the sandbox receiver check follows the same guard: a non-global literal or name is VALIDATION_FAILED (url), nothing sent', async () => {
    const merchant = await createMerchant(platform);
    const port = new URL(receiver.url).port;
    for (const url of [`http://127.0.0.1:${port}/hook`, `http://rebind.example:${port}/hook`]) {
      const checked = await post(platform, merchant, '/api/v1/sandbox/webhooks/check', { url });
      assert.equal(checked.status, 400, JSON.stringify(checked.body));
      assert.equal(checked.body.msg, 'VALIDATION_FAILED');
      assert.deepEqual(
        checked.body.errors?.map((e) => e.field),
        ['url'],
      );
    }
    const rebound = await post(platform, merchant, '/api/v1/sandbox/webhooks/check', {
      url: `http://rebind.example:${port}/hook`,
    });
    assert.match(JSON.stringify(rebound.body), /destination refused: rebind\.example resolves to a non-public address/);
    assert.equal(receiver.received.length, 0);
  });
});
