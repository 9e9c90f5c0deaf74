/**
 * The `pix-api` channel's settings (issue 26, item 1): checked at start, one line per mistake —
 * https URLs, no payouts, BRL/PIX only, the files readable, the key the certificate's, a CA file
 * holding a certificate — and the txid a repeated create asks for.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TxId } from '@paygate/pix';
import { ConfigError, parseConfig } from '../src/config.js';
import { pixTxid } from '../src/modules/channels/pix-api/pix-api.js';
import { RECEIVER_CERT, RECEIVER_KEY } from './tls-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'paygate-pix-settings-'));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const certFile = file('cert.pem', RECEIVER_CERT);
const keyFile = file('key.pem', RECEIVER_KEY);
const otherKeyFile = file(
  'other-key.pem',
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);

const channel = (overrides: Record<string, unknown> = {}) => ({
  name: 'pix',
  kind: 'pix-api',
  methods: [{ currency: 'BRL', code: 'PIX' }],
  payouts: [],
  baseUrl: 'https://pix.example/api/v2',
  tokenUrl: 'https://pix.example/oauth/token',
  clientId: 'client',
  clientSecret: 'secret',
  pixKey: 'recebedor@example.com',
  certFile,
  keyFile,
  caFile: certFile,
  ...overrides,
});

/** The start's refusal of a channels file holding `entry`, as its lines. */
function refusal(entry: Record<string, unknown>): string[] {
  const path = file(`channels-${Math.random().toString(36).slice(2)}.json`, JSON.stringify({ channels: [entry] }));
  try {
    parseConfig({ PAYGATE_CHANNELS: path });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message.split('\n');
  }
  assert.fail('the file was accepted');
}

describe('pix-api settings', () => {
  it('a good channel is accepted: BRL/PIX, no payouts, the files checked', () => {
    const path = file('good.json', JSON.stringify({ channels: [channel()] }));
    const config = parseConfig({ PAYGATE_CHANNELS: path });
    const settings = config.channels[0];
    assert.equal(settings?.kind, 'pix-api');
    assert.deepEqual(settings?.methods, [{ currency: 'BRL', code: 'PIX' }]);
    assert.deepEqual(settings?.payouts, []);
  });

  it('each mistake is one clear line naming the member', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ baseUrl: 'http://pix.example/api/v2' }, /at channels\.0\.baseUrl: an https URL$/],
      [{ tokenUrl: 'not a url' }, /at channels\.0\.tokenUrl: an https URL$/],
      [{ payouts: ['BRL'] }, /at channels\.0\.payouts: the API Pix receives money only: payouts must be \[\]$/],
      [
        { methods: [{ currency: 'BRL', code: 'BOLETO' }] },
        /at channels\.0\.methods: the API Pix serves BRL\/PIX only$/,
      ],
      [{ certFile: join(dir, 'missing.pem') }, /at channels\.0\.certFile: cannot read .*missing\.pem \(ENOENT\)$/],
      [{ keyFile: otherKeyFile }, /at channels\.0\.keyFile: not the private key of the certificate in certFile$/],
      [{ keyFile: certFile }, /at channels\.0\.keyFile: not a PEM private key/],
      [{ caFile: keyFile }, /at channels\.0\.caFile: no PEM certificate in it$/],
      [{ clientSecret: '' }, /at channels\.0\.clientSecret: required$/],
    ];
    for (const [overrides, line] of cases) {
      const lines = refusal(channel(overrides));
      assert.equal(lines.length, 1, lines.join('\n'));
      assert.match(lines[0] as string, line);
    }
  });

  it('several mistakes at once: one line each', () => {
    const lines = refusal(channel({ baseUrl: 'http://x', payouts: ['BRL'], certFile: join(dir, 'nope.pem') }));
    assert.equal(lines.length, 3, lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('channels.0.baseUrl')));
    assert.ok(lines.some((l) => l.includes('channels.0.payouts')));
    assert.ok(lines.some((l) => l.includes('channels.0.certFile')));
    for (const l of lines) assert.match(l, /PAYGATE_CHANNELS: /);
  });

  it("the txid: the API Pix's shape, the same for the same order, another for another platform or order", () => {
    const txid = pixTxid('https://pay.example', 'pix', '1/M-100');
    assert.ok(TxId.safeParse(txid).success, txid);
    assert.equal(pixTxid('https://pay.example', 'pix', '1/M-100'), txid);
    assert.notEqual(pixTxid('https://other.example', 'pix', '1/M-100'), txid);
    assert.notEqual(pixTxid('https://pay.example', 'pix', '1/M-101'), txid);
    assert.notEqual(pixTxid('https://pay.example', 'pix', '2/M-100'), txid);
  });
});
