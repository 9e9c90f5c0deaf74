// Signature-Input and Signature headers: one row per rule of the specification
// (Authentication: Signature-Input; Webhook authentication), each refused for its own reason.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSignature,
  parseSignatureInput,
  READ_COMPONENTS,
  REQUEST_PROFILE,
  serializeSignature,
  serializeSignatureInput,
  serializeSignatureParams,
  WEBHOOK_COMPONENTS,
  WEBHOOK_PROFILE,
  WRITE_COMPONENTS,
} from '@paygate/protocol';
import { assertRefused, NOW, unwrap } from './support.js';

const NONCE = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
const list = (components: readonly string[]) => components.map((name) => `"${name}"`).join(' ');
const READ = list(READ_COMPONENTS);
const WRITE = list(WRITE_COMPONENTS);
const CREATED = `;created=${NOW}`;
const EXPIRES = `;expires=${NOW + 300}`;
const NONCE_PARAM = `;nonce="${NONCE}"`;
const ALG = ';alg="ed25519"';
const PARAMS = `${CREATED}${EXPIRES}${NONCE_PARAM}${ALG}`;
const KEYID = ';keyid="whk-2026-01"';
const WEBHOOK_PARAMS = `${CREATED}${EXPIRES}${NONCE_PARAM}${KEYID}${ALG}`;
const WEBHOOK = list(WEBHOOK_COMPONENTS);

const VALID_READ = `merchant=(${READ})${PARAMS}`;
const VALID_WRITE = `merchant=(${WRITE})${PARAMS}`;
const VALID_WEBHOOK = `platform=(${WEBHOOK})${WEBHOOK_PARAMS}`;

describe('parseSignatureInput accepts the specified forms', () => {
  it('a read and a write request, and a webhook, serialized canonically', () => {
    const read = unwrap(parseSignatureInput(VALID_READ, REQUEST_PROFILE));
    assert.deepEqual(read, {
      label: 'merchant',
      components: [...READ_COMPONENTS],
      created: NOW,
      expires: NOW + 300,
      nonce: NONCE,
    });
    assert.equal(serializeSignatureInput(read), VALID_READ);
    assert.equal(serializeSignatureInput(unwrap(parseSignatureInput(VALID_WRITE, REQUEST_PROFILE))), VALID_WRITE);
    const webhook = unwrap(parseSignatureInput(VALID_WEBHOOK, WEBHOOK_PROFILE));
    assert.equal(webhook.keyid, 'whk-2026-01');
    assert.equal(serializeSignatureInput(webhook), VALID_WEBHOOK);
  });

  it('expires - created of exactly 300 seconds, and of 1 second', () => {
    assert.ok(
      parseSignatureInput(`merchant=(${READ})${CREATED};expires=${NOW + 1}${NONCE_PARAM}${ALG}`, REQUEST_PROFILE).ok,
    );
  });

  it('an uppercase UUID v4 nonce', () => {
    const upper = `merchant=(${READ})${CREATED}${EXPIRES};nonce="${NONCE.toUpperCase()}"${ALG}`;
    assert.ok(parseSignatureInput(upper, REQUEST_PROFILE).ok);
  });
});

// Other RFC 9421 signers (decisions: Signature-Input as other signers write it): the four request
// parameters in any order, RFC 8941 optional whitespace; @signature-params is the canonical
// serialization of the member as received.
const otherSignerRows: { form: string; header: string; params: string }[] = [
  {
    form: 'parameters in another order',
    header: `merchant=(${READ})${EXPIRES}${CREATED}${NONCE_PARAM}${ALG}`,
    params: `(${READ})${EXPIRES}${CREATED}${NONCE_PARAM}${ALG}`,
  },
  {
    form: 'alg first, nonce last',
    header: `merchant=(${WRITE})${ALG}${CREATED}${EXPIRES}${NONCE_PARAM}`,
    params: `(${WRITE})${ALG}${CREATED}${EXPIRES}${NONCE_PARAM}`,
  },
  {
    form: 'the reverse order',
    header: `merchant=(${READ})${ALG}${NONCE_PARAM}${EXPIRES}${CREATED}`,
    params: `(${READ})${ALG}${NONCE_PARAM}${EXPIRES}${CREATED}`,
  },
  {
    form: 'a space after every semicolon',
    header: `merchant=(${READ}); created=${NOW}; expires=${NOW + 300}; nonce="${NONCE}"; alg="ed25519"`,
    params: `(${READ})${PARAMS}`,
  },
  {
    form: 'spaces inside the parentheses and between components',
    header: `merchant=(  "@method"   "@path" "@query"  "merchant-access-key" )${PARAMS}`,
    params: `(${READ})${PARAMS}`,
  },
  {
    form: 'a space just inside each parenthesis',
    header: `merchant=( ${READ} )${PARAMS}`,
    params: `(${READ})${PARAMS}`,
  },
  { form: 'a leading and a trailing space', header: ` ${VALID_READ} `, params: `(${READ})${PARAMS}` },
  {
    form: 'spaces and another order together',
    header: `merchant=( ${WRITE} );  nonce="${NONCE}"; alg="ed25519";created=${NOW}; expires=${NOW + 300}`,
    params: `(${WRITE})${NONCE_PARAM}${ALG}${CREATED}${EXPIRES}`,
  },
];

describe('parseSignatureInput accepts requests as other signers write them', () => {
  for (const row of otherSignerRows) {
    it(row.form, () => {
      const parsed = unwrap(parseSignatureInput(row.header, REQUEST_PROFILE));
      assert.equal(parsed.created, NOW);
      assert.equal(parsed.expires, NOW + 300);
      assert.equal(parsed.nonce, NONCE);
      assert.equal(serializeSignatureParams(parsed), row.params);
      assert.equal(serializeSignatureInput(parsed), `merchant=${row.params}`);
    });
  }

  it('the specification order leaves parameterOrder unset', () => {
    assert.equal(unwrap(parseSignatureInput(VALID_READ, REQUEST_PROFILE)).parameterOrder, undefined);
  });
});

interface Row {
  readonly rule: string;
  readonly header: string;
  readonly reason: RegExp;
}

const requestRows: Row[] = [
  // labels and members
  { rule: 'another label', header: `platform=(${READ})${PARAMS}`, reason: /no signature labelled merchant/ },
  { rule: 'label in uppercase', header: `Merchant=(${READ})${PARAMS}`, reason: /not an RFC 8941 dictionary/ },
  {
    rule: 'a second signature under another label',
    header: `merchant=(${READ})${PARAMS}, other=(${READ})${PARAMS}`,
    reason: /exactly one signature/,
  },
  {
    rule: 'a second signature under the same label',
    header: `merchant=(${READ})${PARAMS}, merchant=(${WRITE})${PARAMS}`,
    reason: /canonical/,
  },
  { rule: 'an empty header', header: '', reason: /exactly one signature/ },
  { rule: 'not a dictionary', header: '("@method")', reason: /not an RFC 8941 dictionary/ },
  { rule: 'an item instead of an inner list', header: `merchant="@method"${PARAMS}`, reason: /not an inner list/ },
  // parameters present, absent, unknown
  { rule: 'created missing', header: `merchant=(${READ})${EXPIRES}${NONCE_PARAM}${ALG}`, reason: /created/ },
  { rule: 'expires missing', header: `merchant=(${READ})${CREATED}${NONCE_PARAM}${ALG}`, reason: /expires/ },
  { rule: 'nonce missing', header: `merchant=(${READ})${CREATED}${EXPIRES}${ALG}`, reason: /nonce/ },
  { rule: 'alg missing', header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM}`, reason: /alg/ },
  { rule: 'an unknown parameter (tag)', header: `${VALID_READ};tag="x"`, reason: /parameter tag is not allowed/ },
  {
    rule: 'keyid on a request',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM}${KEYID}${ALG}`,
    reason: /parameter keyid is not allowed/,
  },
  // parameter types
  {
    rule: 'created as a string',
    header: `merchant=(${READ});created="${NOW}"${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /created must be/,
  },
  {
    rule: 'created as a decimal',
    header: `merchant=(${READ});created=${NOW}.5${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /created must be/,
  },
  {
    rule: 'created as a boolean',
    header: `merchant=(${READ});created${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /created must be/,
  },
  {
    rule: 'created as a token',
    header: `merchant=(${READ});created=now${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /created must be/,
  },
  {
    rule: 'created as a byte sequence',
    header: `merchant=(${READ});created=:AAAA:${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /created must be/,
  },
  {
    rule: 'created as an RFC 9651 date',
    header: `merchant=(${READ});created=@${NOW}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /RFC 8941|created must be/,
  },
  {
    rule: 'created negative',
    header: `merchant=(${READ});created=-1;expires=1${NONCE_PARAM}${ALG}`,
    reason: /created must be a non-negative integer/,
  },
  {
    rule: 'expires as a string',
    header: `merchant=(${READ})${CREATED};expires="${NOW + 300}"${NONCE_PARAM}${ALG}`,
    reason: /expires must be an integer/,
  },
  {
    rule: 'expires as a decimal',
    header: `merchant=(${READ})${CREATED};expires=${NOW + 300}.0${NONCE_PARAM}${ALG}`,
    reason: /canonical/,
  },
  {
    rule: 'nonce as an integer',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce=42${ALG}`,
    reason: /nonce must be a UUID v4/,
  },
  {
    rule: 'nonce as a token',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce=a47ac10b-58cc-4372-a567-0e02b2c3d479${ALG}`,
    reason: /nonce must be a UUID v4/,
  },
  {
    rule: 'nonce as a byte sequence',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce=:9HrBC1jMQ3KlZw4CssPUeQ==:${ALG}`,
    reason: /nonce must be a UUID v4/,
  },
  {
    rule: 'alg as a token',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg=ed25519`,
    reason: /alg must be the string "ed25519"/,
  },
  {
    rule: 'alg as a boolean',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg`,
    reason: /alg must be/,
  },
  // time window
  {
    rule: 'expires - created of 301 seconds',
    header: `merchant=(${READ})${CREATED};expires=${NOW + 301}${NONCE_PARAM}${ALG}`,
    reason: /exceeds 300 seconds/,
  },
  {
    rule: 'expires equal to created',
    header: `merchant=(${READ})${CREATED};expires=${NOW}${NONCE_PARAM}${ALG}`,
    reason: /expires must be after created/,
  },
  {
    rule: 'expires before created',
    header: `merchant=(${READ})${CREATED};expires=${NOW - 1}${NONCE_PARAM}${ALG}`,
    reason: /expires must be after created/,
  },
  // nonce format
  {
    rule: 'nonce a UUID v1',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce="f47ac10b-58cc-1372-a567-0e02b2c3d479"${ALG}`,
    reason: /UUID v4/,
  },
  {
    rule: 'nonce with the wrong variant',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce="f47ac10b-58cc-4372-c567-0e02b2c3d479"${ALG}`,
    reason: /UUID v4/,
  },
  {
    rule: 'nonce without hyphens',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce="f47ac10b58cc4372a5670e02b2c3d479"${ALG}`,
    reason: /UUID v4/,
  },
  {
    rule: 'nonce in braces',
    header: `merchant=(${READ})${CREATED}${EXPIRES};nonce="{${NONCE}}"${ALG}`,
    reason: /UUID v4/,
  },
  { rule: 'nonce empty', header: `merchant=(${READ})${CREATED}${EXPIRES};nonce=""${ALG}`, reason: /UUID v4/ },
  // alg value
  {
    rule: 'alg in uppercase',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg="ED25519"`,
    reason: /alg must be the string "ed25519"/,
  },
  {
    rule: 'alg another algorithm',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg="hmac-sha256"`,
    reason: /alg must be/,
  },
  // covered components
  {
    rule: 'write list with a component added',
    header: `merchant=(${WRITE} "@query")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'write list with a component removed',
    header: `merchant=(${list(WRITE_COMPONENTS.filter((c) => c !== 'idempotency-key'))})${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'write list reordered',
    header: `merchant=("@method" "@path" "content-encryption" "content-type" "content-digest" "idempotency-key" "merchant-access-key")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'read list with a component added',
    header: `merchant=(${READ} "content-digest")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'read list without @query',
    header: `merchant=("@method" "@path" "merchant-access-key")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'read list reordered',
    header: `merchant=("@path" "@method" "@query" "merchant-access-key")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'read list with a component repeated',
    header: `merchant=("@method" "@path" "@query" "@query" "merchant-access-key")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'a component in uppercase',
    header: `merchant=("@method" "@path" "@query" "Merchant-Access-Key")${PARAMS}`,
    reason: /not the required list/,
  },
  {
    rule: 'another derived component',
    header: `merchant=("@method" "@target-uri" "@query" "merchant-access-key")${PARAMS}`,
    reason: /not the required list/,
  },
  { rule: 'the webhook list on a request', header: `merchant=(${WEBHOOK})${PARAMS}`, reason: /not the required list/ },
  { rule: 'no components', header: `merchant=()${PARAMS}`, reason: /not the required list/ },
  {
    rule: 'a component as a token',
    header: `merchant=("@method" "@path" "@query" merchant-access-key)${PARAMS}`,
    reason: /plain strings/,
  },
  {
    rule: 'a component with a parameter',
    header: `merchant=("@method" "@path" "@query";name="orderNo" "merchant-access-key")${PARAMS}`,
    reason: /plain strings/,
  },
  // serializations structured-headers accepts but the parser refuses (beyond optional whitespace,
  // only the canonical form: the header and the @signature-params line then never disagree)
  {
    rule: 'created with leading zeros',
    header: `merchant=(${READ});created=0${NOW}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /canonical/,
  },
  {
    rule: 'created as a decimal with a zero fraction',
    header: `merchant=(${READ});created=${NOW}.0${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /canonical/,
  },
  {
    rule: 'an escaped character in a string',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg="ed2551\\9"`,
    reason: /RFC 8941/,
  },
  // each parameter exactly once (RFC 8941 parsing keeps the last value of a repeated key)
  {
    rule: 'created repeated',
    header: `merchant=(${READ});created=1${CREATED}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /parameter created is repeated/,
  },
  {
    rule: 'nonce repeated',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM}${ALG};nonce="0b8fbcb1-92a3-4c1e-9d6b-3a6a0a1c2b7e"`,
    reason: /parameter nonce is repeated/,
  },
  {
    rule: 'nonce repeated with the same value',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM}${NONCE_PARAM}${ALG}`,
    reason: /parameter nonce is repeated/,
  },
  {
    rule: 'nonce repeated, the second after a space',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM}${ALG}; nonce="${NONCE}"`,
    reason: /parameter nonce is repeated/,
  },
  {
    rule: 'alg repeated',
    header: `merchant=(${READ})${ALG}${CREATED}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /parameter alg is repeated/,
  },
  {
    rule: 'expires repeated, the first too far out',
    header: `merchant=(${READ})${CREATED};expires=${NOW + 3600}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /parameter expires is repeated/,
  },
  // whitespace RFC 8941 does not allow
  {
    rule: 'a space before a semicolon',
    header: `merchant=(${READ}) ;created=${NOW}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /RFC 8941/,
  },
  {
    rule: 'a space around =',
    header: `merchant=(${READ});created = ${NOW}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /RFC 8941/,
  },
  { rule: 'a space after the label', header: `merchant =(${READ})${PARAMS}`, reason: /RFC 8941/ },
  {
    rule: 'a tab after a semicolon',
    header: `merchant=(${READ});\tcreated=${NOW}${EXPIRES}${NONCE_PARAM}${ALG}`,
    reason: /RFC 8941/,
  },
  {
    rule: 'no space between components',
    header: `merchant=("@method""@path" "@query" "merchant-access-key")${PARAMS}`,
    reason: /RFC 8941/,
  },
  // keyid in any position on a request
  {
    rule: 'keyid first on a request',
    header: `merchant=(${READ})${KEYID}${PARAMS}`,
    reason: /parameter keyid is not allowed/,
  },
  {
    rule: 'keyid last on a request, after a space',
    header: `merchant=(${READ})${PARAMS}; keyid="k1"`,
    reason: /parameter keyid is not allowed/,
  },
  {
    rule: 'an unknown parameter among reordered ones',
    header: `merchant=(${READ})${ALG};tag="web-bot-auth"${NONCE_PARAM}${CREATED}${EXPIRES}`,
    reason: /parameter tag is not allowed/,
  },
  {
    rule: 'a tab between components',
    header: `merchant=("@method"\t"@path" "@query" "merchant-access-key")${PARAMS}`,
    reason: /RFC 8941/,
  },
  {
    rule: 'a non-ASCII character',
    header: `merchant=(${READ})${CREATED}${EXPIRES}${NONCE_PARAM};alg="ed25519é"`,
    reason: /RFC 8941/,
  },
];

describe('parseSignatureInput refuses, on requests', () => {
  for (const row of requestRows) {
    it(row.rule, () => {
      assertRefused(parseSignatureInput(row.header, REQUEST_PROFILE), 'invalid-signature-header', row.reason);
    });
  }
});

const webhookRows: Row[] = [
  { rule: 'keyid absent', header: `platform=(${WEBHOOK})${PARAMS}`, reason: /keyid must be a string/ },
  {
    rule: 'keyid empty',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM};keyid=""${ALG}`,
    reason: /keyid must be a string/,
  },
  {
    rule: 'keyid as a token',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM};keyid=whk${ALG}`,
    reason: /keyid must be a string/,
  },
  {
    rule: 'keyid as an integer',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM};keyid=1${ALG}`,
    reason: /keyid must be a string/,
  },
  {
    rule: 'the merchant label',
    header: `merchant=(${WEBHOOK})${WEBHOOK_PARAMS}`,
    reason: /no signature labelled platform/,
  },
  { rule: 'the read list', header: `platform=(${READ})${WEBHOOK_PARAMS}`, reason: /not the required list/ },
  {
    rule: 'the webhook list without webhook-event-id',
    header: `platform=("@method" "@path" "@query" "content-type" "content-digest")${WEBHOOK_PARAMS}`,
    reason: /not the required list/,
  },
  { rule: 'an unknown parameter', header: `${VALID_WEBHOOK};tag="x"`, reason: /parameter tag is not allowed/ },
  {
    rule: 'expires - created of 301 seconds',
    header: `platform=(${WEBHOOK})${CREATED};expires=${NOW + 301}${NONCE_PARAM}${KEYID}${ALG}`,
    reason: /exceeds 300 seconds/,
  },
  {
    rule: 'alg other than ed25519',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM}${KEYID};alg="rsa-pss-sha512"`,
    reason: /alg must be/,
  },
  // webhooks keep the order and the canonical form the specification shows
  {
    rule: 'keyid after alg',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM}${ALG}${KEYID}`,
    reason: /order/,
  },
  {
    rule: 'expires before created',
    header: `platform=(${WEBHOOK})${EXPIRES}${CREATED}${NONCE_PARAM}${KEYID}${ALG}`,
    reason: /order/,
  },
  {
    rule: 'a space after a semicolon',
    header: `platform=(${WEBHOOK}); created=${NOW}${EXPIRES}${NONCE_PARAM}${KEYID}${ALG}`,
    reason: /canonical/,
  },
  {
    rule: 'a space after the opening parenthesis',
    header: `platform=( ${WEBHOOK})${WEBHOOK_PARAMS}`,
    reason: /canonical/,
  },
  { rule: 'a trailing space', header: `${VALID_WEBHOOK} `, reason: /canonical/ },
  {
    rule: 'keyid repeated',
    header: `platform=(${WEBHOOK})${CREATED}${EXPIRES}${NONCE_PARAM}${KEYID};keyid="other"${ALG}`,
    reason: /parameter keyid is repeated/,
  },
];

describe('parseSignatureInput refuses, on webhooks', () => {
  for (const row of webhookRows) {
    it(row.rule, () => {
      assertRefused(parseSignatureInput(row.header, WEBHOOK_PROFILE), 'invalid-signature-header', row.reason);
    });
  }
});

describe('parseSignature', () => {
  const signature = Buffer.alloc(64, 0xa5);
  const valid = serializeSignature('merchant', signature);
  const b64 = signature.toString('base64');

  it('accepts one 64-byte byte sequence under the label', () => {
    assert.equal(valid, `merchant=:${b64}:`);
    assert.deepEqual(unwrap(parseSignature(valid, 'merchant')), signature);
  });

  const rows: Row[] = [
    { rule: 'another label', header: `platform=:${b64}:`, reason: /no signature labelled merchant/ },
    { rule: 'a second signature', header: `${valid}, other=:${b64}:`, reason: /exactly one signature/ },
    { rule: 'the same label twice', header: `${valid}, ${valid}`, reason: /canonical/ },
    { rule: 'a string instead of bytes', header: `merchant="${b64}"`, reason: /not a byte sequence/ },
    { rule: 'an inner list', header: `merchant=(:${b64}:)`, reason: /not a byte sequence/ },
    { rule: 'a parameter on the signature', header: `${valid};keyid="k"`, reason: /not a byte sequence/ },
    { rule: '63 bytes', header: `merchant=:${Buffer.alloc(63, 1).toString('base64')}:`, reason: /64 bytes/ },
    { rule: '65 bytes', header: `merchant=:${Buffer.alloc(65, 1).toString('base64')}:`, reason: /64 bytes/ },
    { rule: 'no bytes', header: 'merchant=::', reason: /64 bytes/ },
    { rule: 'base64 without padding', header: `merchant=:${b64.replace(/=+$/, '')}:`, reason: /canonical/ },
    {
      rule: 'base64 with non-zero trailing bits',
      header: `merchant=:${b64.replace(/Q==$/, 'R==')}:`,
      reason: /canonical/,
    },
    {
      rule: 'base64url alphabet',
      header: `merchant=:${signature.toString('base64url')}:`,
      reason: /RFC 8941|canonical/,
    },
    {
      rule: 'whitespace inside the base64',
      header: `merchant=:${b64.slice(0, 10)} ${b64.slice(10)}:`,
      reason: /RFC 8941/,
    },
    { rule: 'a trailing space', header: `${valid} `, reason: /canonical/ },
    { rule: 'an empty header', header: '', reason: /exactly one signature/ },
  ];
  for (const row of rows) {
    it(`refuses ${row.rule}`, () => {
      assertRefused(parseSignature(row.header, 'merchant'), 'invalid-signature-header', row.reason);
    });
  }
});
