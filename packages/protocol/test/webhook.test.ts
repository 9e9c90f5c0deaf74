// Webhooks (specification: Webhook authentication; Events, Delivery rules): signWebhook signs
// each attempt afresh, and verifyWebhook refuses each broken rule at the check the
// specification orders it in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  contentDigest,
  parseSignatureInput,
  type ReceivedWebhook,
  serializeSignature,
  signWebhook,
  verifyWebhook,
  WEBHOOK_PROFILE,
  type WebhookCheck,
  type WebhookVerifierDeps,
  webhookTarget,
} from '@paygate/protocol';
import {
  assertWebhookFailedAt,
  EVENT_BODY,
  EVENT_ID,
  freshUuid,
  headerOf,
  merchantKey,
  NOW,
  otherWebhookKey,
  signedWebhook,
  signWebhookRaw,
  unwrap,
  WEBHOOK_KEY_ID,
  WEBHOOK_URL,
  webhookDeps,
  webhookKey,
  withExtraHeader,
  withHeader,
  withoutHeader,
} from './support.js';

const HEADERS = ['content-type', 'content-digest', 'webhook-event-id', 'signature-input', 'signature'];
const eventBody = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields), 'utf8');
const flipBodyByte = (webhook: ReceivedWebhook, index: number): ReceivedWebhook => {
  const body = Buffer.from(webhook.body);
  body[index] = (body[index] as number) ^ 0x01;
  return { ...webhook, body };
};
const editInput = (webhook: ReceivedWebhook, from: string, to: string) =>
  withHeader(webhook, 'signature-input', headerOf(webhook, 'signature-input').replace(from, to));
const signedWindow = (created: number, expires: number) => ({
  created,
  expires,
  nonce: freshUuid(),
  keyid: WEBHOOK_KEY_ID,
});

describe('signWebhook', () => {
  it('signs a delivery that verifies, returning the raw body, eventId and keyid', async () => {
    const verified = unwrap(await verifyWebhook(signedWebhook(), webhookDeps()));
    assert.deepEqual(verified.body, EVENT_BODY);
    assert.equal(verified.eventId, EVENT_ID);
    assert.equal(verified.keyid, WEBHOOK_KEY_ID);
  });

  it('signs every attempt afresh: its own created, expires and nonce; same body, digest and event id', async () => {
    const sign = (created: number, nonce: string) =>
      signWebhook(
        { url: WEBHOOK_URL, body: EVENT_BODY, eventId: EVENT_ID },
        { keyid: WEBHOOK_KEY_ID, key: webhookKey, created, nonce },
      );
    const first = sign(NOW - 600, freshUuid());
    const retry = sign(NOW, freshUuid());
    for (const name of ['content-type', 'content-digest', 'webhook-event-id']) {
      assert.equal(retry.headers[name], first.headers[name], name);
    }
    assert.notEqual(retry.headers.signature, first.headers.signature);
    const params = (headers: Record<string, string>) =>
      unwrap(parseSignatureInput(headers['signature-input'] as string, WEBHOOK_PROFILE));
    const [a, b] = [params(first.headers), params(retry.headers)];
    assert.equal(a.created, NOW - 600);
    assert.equal(b.created, NOW);
    assert.equal(a.expires, NOW - 300);
    assert.equal(b.expires, NOW + 300);
    assert.notEqual(a.nonce, b.nonce);

    const received = (headers: Record<string, string>): ReceivedWebhook => ({
      method: 'POST',
      ...webhookTarget(WEBHOOK_URL),
      headers: Object.entries(headers),
      body: EVENT_BODY,
    });
    assertWebhookFailedAt(await verifyWebhook(received(first.headers), webhookDeps()), 'signature-input', /expired/);
    assert.ok((await verifyWebhook(received(retry.headers), webhookDeps())).ok);
  });

  it('keeps no state between signings: the same inputs give the same headers', () => {
    const signer = { keyid: WEBHOOK_KEY_ID, key: webhookKey, created: NOW, nonce: freshUuid() };
    const delivery = { url: WEBHOOK_URL, body: EVENT_BODY, eventId: EVENT_ID };
    assert.deepEqual(signWebhook(delivery, signer), signWebhook(delivery, signer));
  });

  const lifetimes: { lifetime: number | undefined; expires: number }[] = [
    { lifetime: undefined, expires: NOW + 300 },
    { lifetime: 60, expires: NOW + 60 },
    { lifetime: 3600, expires: NOW + 300 },
  ];
  for (const { lifetime, expires } of lifetimes) {
    it(`sets expires to created + ${expires - NOW} for lifetime ${lifetime}`, () => {
      const { headers } = signWebhook(
        { url: WEBHOOK_URL, body: EVENT_BODY, eventId: EVENT_ID },
        { keyid: WEBHOOK_KEY_ID, key: webhookKey, created: NOW, nonce: freshUuid(), ...(lifetime ? { lifetime } : {}) },
      );
      assert.equal(unwrap(parseSignatureInput(headers['signature-input'] as string, WEBHOOK_PROFILE)).expires, expires);
    });
  }

  it('covers @path and @query from the URL as sent, a lone ? without a query', () => {
    const sign = (url: string) =>
      signWebhook(
        { url, body: EVENT_BODY, eventId: EVENT_ID },
        { keyid: WEBHOOK_KEY_ID, key: webhookKey, created: NOW, nonce: freshUuid() },
      ).signatureBase.split('\n');
    assert.deepEqual(sign('https://m.example/webhook/payout').slice(0, 3), [
      '"@method": POST',
      '"@path": /webhook/payout',
      '"@query": ?',
    ]);
    assert.deepEqual(sign('https://m.example/hook?b=2&a=%2F').slice(1, 3), ['"@path": /hook', '"@query": ?b=2&a=%2F']);
  });
});

describe('verifyWebhook accepts', () => {
  it('keys given as a lookup function, and no method given', async () => {
    const { method: _method, ...webhook } = signedWebhook();
    const deps = webhookDeps({ publicKeys: (keyid) => (keyid === WEBHOOK_KEY_ID ? webhookKey.publicKey : undefined) });
    assert.ok((await verifyWebhook(webhook, deps)).ok);
  });

  const windows: { rule: string; created: number }[] = [
    { rule: 'now equal to expires', created: NOW - 300 },
    { rule: 'now exactly created - 300', created: NOW + 300 },
  ];
  for (const { rule, created } of windows) {
    it(`(boundary) ${rule}`, async () => {
      assert.ok((await verifyWebhook(signedWebhook({ created }), webhookDeps())).ok);
    });
  }

  it('consults the nonce guard once, after the signature verified', async () => {
    const seen: string[] = [];
    const webhook = signedWebhook();
    const deps = webhookDeps({ consumeNonce: (nonce) => (seen.includes(nonce) ? false : (seen.push(nonce), true)) });
    assert.ok((await verifyWebhook(webhook, deps)).ok);
    assert.equal(seen.length, 1);
    assertWebhookFailedAt(await verifyWebhook(webhook, deps), 'nonce', /used before/);
  });
});

interface Row {
  readonly rule: string;
  readonly webhook: () => ReceivedWebhook;
  readonly deps?: Partial<WebhookVerifierDeps>;
  readonly check: WebhookCheck;
  readonly reason: RegExp;
}

const ORDER: WebhookCheck[] = ['shape', 'digest', 'event-id', 'signature-input', 'keyid', 'signature', 'nonce'];

function runRows(rows: readonly Row[]): void {
  for (const row of rows) {
    it(row.rule, async () => {
      const calls = { keyid: 0, nonce: 0 };
      const base = webhookDeps(row.deps);
      const keys = base.publicKeys;
      const deps: WebhookVerifierDeps = {
        now: base.now,
        publicKeys: (keyid) => {
          calls.keyid++;
          return typeof keys === 'function' ? keys(keyid) : keys.get(keyid);
        },
        consumeNonce: (nonce, expires) => {
          calls.nonce++;
          return base.consumeNonce ? base.consumeNonce(nonce, expires) : true;
        },
      };
      assertWebhookFailedAt(await verifyWebhook(row.webhook(), deps), row.check, row.reason);
      const reached = ORDER.indexOf(row.check);
      if (reached < ORDER.indexOf('keyid')) assert.equal(calls.keyid, 0, 'must not look up a key');
      if (reached < ORDER.indexOf('nonce')) assert.equal(calls.nonce, 0, 'must not consume the nonce');
    });
  }
}

describe('verifyWebhook refuses at shape', () => {
  runRows([
    { rule: 'method GET', webhook: () => ({ ...signedWebhook(), method: 'GET' }), check: 'shape', reason: /POST/ },
    ...HEADERS.map((name) => ({
      rule: `without ${name}`,
      webhook: () => withoutHeader(signedWebhook(), name),
      check: 'shape' as const,
      reason: new RegExp(`missing ${name}`),
    })),
    ...HEADERS.map((name) => ({
      rule: `${name} twice`,
      webhook: () => {
        const webhook = signedWebhook();
        return withExtraHeader(webhook, name.toUpperCase(), headerOf(webhook, name));
      },
      check: 'shape' as const,
      reason: new RegExp(`header ${name} is repeated`),
    })),
    {
      rule: 'Content-Type text/plain',
      webhook: () => withHeader(signedWebhook(), 'content-type', 'text/plain'),
      check: 'shape',
      reason: /Content-Type/,
    },
  ]);
});

describe('verifyWebhook refuses at digest', () => {
  runRows([
    {
      rule: 'one body byte changed',
      webhook: () => flipBodyByte(signedWebhook(), 30),
      check: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'the body re-serialized with spaces',
      webhook: () => ({
        ...signedWebhook(),
        body: Buffer.from(JSON.stringify(JSON.parse(EVENT_BODY.toString()), null, 1)),
      }),
      check: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'a digest of other bytes',
      webhook: () => withHeader(signedWebhook(), 'content-digest', contentDigest(Buffer.from('{}'))),
      check: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'a sha-512 digest',
      webhook: () => withHeader(signedWebhook(), 'content-digest', 'sha-512=:AAAA:'),
      check: 'digest',
      reason: /Content-Digest/,
    },
  ]);
});

describe('verifyWebhook refuses at event-id', () => {
  runRows([
    {
      rule: 'Webhook-Event-Id differs from the body eventId',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW + 300), { eventId: 'evt_other' }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'a body without eventId',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW + 300), { body: eventBody({ orderNo: 'P1' }) }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'a numeric eventId',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW + 300), { body: eventBody({ eventId: 7 }), eventId: '7' }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'a body that is not JSON',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW + 300), { body: Buffer.from(`eventId=${EVENT_ID}`) }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'a body that is a JSON array',
      webhook: () =>
        signWebhookRaw(signedWindow(NOW, NOW + 300), { body: Buffer.from(JSON.stringify([{ eventId: EVENT_ID }])) }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'an eventId that differs only in case',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW + 300), { eventId: EVENT_ID.toUpperCase() }),
      check: 'event-id',
      reason: /differs/,
    },
  ]);
});

describe('verifyWebhook refuses at signature-input (time window, nonce, parameters)', () => {
  runRows([
    {
      rule: 'now after expires',
      webhook: () => signedWebhook({ created: NOW - 301 }),
      check: 'signature-input',
      reason: /expired/,
    },
    {
      rule: 'now earlier than created - 300',
      webhook: () => signedWebhook({ created: NOW + 301 }),
      check: 'signature-input',
      reason: /in the future/,
    },
    {
      rule: 'expires - created over 300',
      webhook: () => signWebhookRaw(signedWindow(NOW - 1, NOW + 300)),
      check: 'signature-input',
      reason: /exceeds 300/,
    },
    {
      rule: 'expires equal to created',
      webhook: () => signWebhookRaw(signedWindow(NOW, NOW)),
      check: 'signature-input',
      reason: /after created/,
    },
    {
      rule: 'a nonce that is not a UUID v4',
      webhook: () => signWebhookRaw({ ...signedWindow(NOW, NOW + 300), nonce: 'evt_01HZX3K8Q9' }),
      check: 'signature-input',
      reason: /UUID v4/,
    },
    {
      rule: 'keyid absent',
      webhook: () => signWebhookRaw({ created: NOW, expires: NOW + 300, nonce: freshUuid() }),
      check: 'signature-input',
      reason: /keyid must be a string/,
    },
    {
      rule: 'alg other than ed25519',
      webhook: () => editInput(signedWebhook(), 'alg="ed25519"', 'alg="rsa-v1_5-sha256"'),
      check: 'signature-input',
      reason: /alg must be/,
    },
    {
      rule: 'the request label',
      webhook: () => editInput(signedWebhook(), 'platform=', 'merchant='),
      check: 'signature-input',
      reason: /no signature labelled platform/,
    },
    {
      rule: 'webhook-event-id left out of the components',
      webhook: () => editInput(signedWebhook(), ' "webhook-event-id"', ''),
      check: 'signature-input',
      reason: /not the required list/,
    },
    {
      rule: 'keyid after alg',
      webhook: () => {
        const w = signedWebhook();
        const input = headerOf(w, 'signature-input');
        const keyid = `;keyid="${WEBHOOK_KEY_ID}"`;
        return withHeader(w, 'signature-input', `${input.replace(keyid, '')}${keyid}`);
      },
      check: 'signature-input',
      reason: /order/,
    },
  ]);
});

describe('verifyWebhook refuses at keyid', () => {
  runRows([
    {
      rule: 'an unknown keyid',
      webhook: () => signedWebhook({ keyid: 'whk-retired' }),
      check: 'keyid',
      reason: /unknown keyid whk-retired/,
    },
    {
      rule: 'a lookup function that knows no key',
      webhook: () => signedWebhook(),
      deps: { publicKeys: () => undefined },
      check: 'keyid',
      reason: /unknown keyid/,
    },
    {
      rule: 'an empty key map',
      webhook: () => signedWebhook(),
      deps: { publicKeys: new Map() },
      check: 'keyid',
      reason: /unknown keyid/,
    },
  ]);
});

describe('verifyWebhook refuses at signature', () => {
  runRows([
    {
      rule: 'signed with another key under the known keyid',
      webhook: () => signedWebhook({ key: otherWebhookKey }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'signed with a merchant key',
      webhook: () => signedWebhook({ key: merchantKey }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the keyid selects another key',
      webhook: () => signedWebhook(),
      deps: { publicKeys: new Map([[WEBHOOK_KEY_ID, otherWebhookKey.publicKey]]) },
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'delivered to another path',
      webhook: () => ({ ...signedWebhook(), path: '/webhook/payout' }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query changed',
      webhook: () => ({ ...signedWebhook(), query: 'shop=8&v=' }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'the query dropped',
      webhook: () => ({ ...signedWebhook(), query: undefined }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'an empty query value dropped',
      webhook: () => ({ ...signedWebhook(), query: 'shop=7' }),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'another delivery’s signature',
      webhook: () => withHeader(signedWebhook(), 'signature', headerOf(signedWebhook(), 'signature')),
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'created changed after signing',
      webhook: () => {
        const w = signedWebhook();
        return editInput(w, `created=${NOW}`, `created=${NOW + 1}`);
      },
      check: 'signature',
      reason: /does not verify/,
    },
    {
      rule: 'a Signature under the request label',
      webhook: () => {
        const w = signedWebhook();
        return withHeader(w, 'signature', headerOf(w, 'signature').replace('platform=', 'merchant='));
      },
      check: 'signature',
      reason: /no signature labelled platform/,
    },
    {
      rule: 'a Signature of 63 bytes',
      webhook: () => withHeader(signedWebhook(), 'signature', serializeSignature('platform', Buffer.alloc(63))),
      check: 'signature',
      reason: /64 bytes/,
    },
  ]);

  it('reports the base it built', async () => {
    const result = await verifyWebhook(signedWebhook({ key: otherWebhookKey }), webhookDeps());
    assert.ok(!result.ok);
    assert.match(
      result.error.signatureBase ?? '',
      /^"@method": POST\n"@path": \/webhook\/payment\n"@query": \?shop=7&v=\n/,
    );
  });
});

describe('verifyWebhook refuses at nonce', () => {
  runRows([
    {
      rule: 'a nonce the guard has seen',
      webhook: () => signedWebhook(),
      deps: { consumeNonce: () => false },
      check: 'nonce',
      reason: /used before/,
    },
    {
      rule: 'a nonce the guard refuses asynchronously',
      webhook: () => signedWebhook(),
      deps: { consumeNonce: async () => false },
      check: 'nonce',
      reason: /used before/,
    },
  ]);
});

describe('verifyWebhook reports the earlier check when two rules fail', () => {
  runRows([
    {
      rule: 'shape (duplicate Signature) before digest (body changed)',
      webhook: () => {
        const w = flipBodyByte(signedWebhook(), 30);
        return withExtraHeader(w, 'signature', headerOf(w, 'signature'));
      },
      check: 'shape',
      reason: /repeated/,
    },
    {
      rule: 'digest (body of another event) before event-id',
      webhook: () => ({ ...signedWebhook(), body: eventBody({ eventId: 'evt_other' }) }),
      check: 'digest',
      reason: /Content-Digest/,
    },
    {
      rule: 'event-id before time window (expired)',
      webhook: () => signWebhookRaw(signedWindow(NOW - 1000, NOW - 900), { eventId: 'evt_other' }),
      check: 'event-id',
      reason: /differs/,
    },
    {
      rule: 'time window (expired) before keyid (unknown)',
      webhook: () => signedWebhook({ created: NOW - 1000, keyid: 'whk-retired' }),
      check: 'signature-input',
      reason: /expired/,
    },
    {
      rule: 'keyid (unknown) before signature (wrong key)',
      webhook: () => signedWebhook({ keyid: 'whk-retired', key: otherWebhookKey }),
      check: 'keyid',
      reason: /unknown keyid/,
    },
    {
      rule: 'signature (wrong key) before nonce (replayed)',
      webhook: () => signedWebhook({ key: otherWebhookKey }),
      deps: { consumeNonce: () => false },
      check: 'signature',
      reason: /does not verify/,
    },
  ]);
});
