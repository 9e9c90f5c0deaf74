/**
 * The `sepa-sftp` channel's settings (issue 37; decisions.md, "SEPA payouts"): checked at start,
 * one line per mistake — the key file readable and a private key ssh2 can use, the host key in
 * `SHA256:` form, the debtor's IBAN and BIC valid, the directories absolute, no methods, payouts
 * exactly EUR, durations.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { sshKeyPair } from './sshd-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'paygate-sepa-settings-'));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const pair = sshKeyPair();
const keyFile = file('id_ed25519', pair.privateKey);
const publicFile = file('id_ed25519.pub', pair.publicKey);

const channel = (overrides: Record<string, unknown> = {}) => ({
  name: 'bank',
  kind: 'sepa-sftp',
  methods: [],
  payouts: ['EUR'],
  host: '127.0.0.1',
  port: 2222,
  username: 'paygate',
  privateKeyFile: keyFile,
  hostKey: 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s',
  uploadDir: '/upload',
  downloadDir: '/download/',
  debtor: { name: 'Paygate Payouts SA', iban: 'de89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' },
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

describe('sepa-sftp settings', () => {
  it('a good channel is accepted: EUR payouts, the IBAN normalized, the durations defaulted', () => {
    const path = file('good.json', JSON.stringify({ channels: [channel()] }));
    const settings = parseConfig({ PAYGATE_CHANNELS: path }).channels[0];
    assert.equal(settings?.kind, 'sepa-sftp');
    if (settings?.kind !== 'sepa-sftp') return;
    assert.deepEqual(settings.payouts, ['EUR']);
    assert.equal(settings.debtor.iban, 'DE89370400440532013000');
    assert.equal(settings.downloadDir, '/download');
    assert.equal(settings.batchEvery, 60_000);
    assert.equal(settings.pollEvery, 60_000);
    // The execution date's calendar: the euro area's time zone, no cut-off.
    assert.equal(settings.timeZone, 'Europe/Brussels');
    assert.deepEqual(settings.cutOffs, []);
    assert.equal(settings.instant, false);
    assert.deepEqual(settings.methods, []);
    const tuned = parseConfig({
      PAYGATE_CHANNELS: file(
        'tuned.json',
        JSON.stringify({
          channels: [channel({ batchEvery: '5m', pollEvery: '2s', timeZone: 'Europe/Helsinki', cutOff: '14:30' })],
        }),
      ),
    }).channels[0];
    assert.ok(tuned?.kind === 'sepa-sftp' && tuned.batchEvery === 300_000 && tuned.pollEvery === 2_000);
    assert.equal(tuned.timeZone, 'Europe/Helsinki');
    // The one cutOff of before is read as cutOffs with one time.
    assert.deepEqual(tuned.cutOffs, ['14:30']);
    const banking = parseConfig({
      PAYGATE_CHANNELS: file(
        'banking.json',
        JSON.stringify({
          channels: [
            channel({
              methods: [{ currency: 'EUR', code: 'SEPA' }],
              cutOffs: ['15:00', '09:30', '12:00', '09:30'],
              instant: true,
            }),
          ],
        }),
      ),
    }).channels[0];
    assert.ok(banking?.kind === 'sepa-sftp');
    // Payments by bank transfer, cut-offs sorted and each once, SEPA Instant.
    assert.deepEqual(banking.methods, [{ currency: 'EUR', code: 'SEPA' }]);
    assert.deepEqual(banking.cutOffs, ['09:30', '12:00', '15:00']);
    assert.equal(banking.instant, true);
  });

  it('each mistake is one clear line naming the member', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { methods: [{ currency: 'BRL', code: 'PIX' }] },
        /at channels\.0\.methods: a sepa-sftp channel takes payments by bank transfer in EUR only: methods must be \[\] or \[\{"currency": "EUR", "code": "SEPA"\}\]$/,
      ],
      [
        { payouts: ['EUR', 'BRL'] },
        /at channels\.0\.payouts: a sepa-sftp channel pays out EUR: payouts must be \["EUR"\]$/,
      ],
      [{ payouts: [] }, /at channels\.0\.payouts: a sepa-sftp channel pays out EUR/],
      [{ privateKeyFile: join(dir, 'missing') }, /at channels\.0\.privateKeyFile: cannot read .*missing \(ENOENT\)$/],
      [{ privateKeyFile: publicFile }, /at channels\.0\.privateKeyFile: not an unencrypted OpenSSH or PEM private key/],
      [
        { privateKeyFile: file('junk', 'hello') },
        /at channels\.0\.privateKeyFile: not an unencrypted OpenSSH or PEM private key/,
      ],
      [{ hostKey: 'ab:cd:ef' }, /at channels\.0\.hostKey: the server host key fingerprint as ssh-keygen -lf prints it/],
      [{ uploadDir: 'upload' }, /at channels\.0\.uploadDir: an absolute path on the server, such as \/upload$/],
      [{ downloadDir: '' }, /at channels\.0\.downloadDir: an absolute path/],
      [{ debtor: { name: 'Paygate', iban: 'DE89370400440532013001' } }, /at channels\.0\.debtor\.iban: not an IBAN/],
      [
        { debtor: { name: 'Paygate', iban: 'DE89370400440532013000', bic: 'cobadeff' } },
        /at channels\.0\.debtor\.bic: not a BIC/,
      ],
      [{ debtor: { name: '', iban: 'DE89370400440532013000' } }, /at channels\.0\.debtor\.name: required$/],
      [{ batchEvery: 'soon' }, /at channels\.0\.batchEvery: a duration of at least 1s, such as 60s or 5m$/],
      [{ pollEvery: '10ms' }, /at channels\.0\.pollEvery: a duration of at least 1s/],
      [{ port: 0 }, /at channels\.0\.port: /],
      [{ timeZone: 'CET+1' }, /at channels\.0\.timeZone: an IANA time zone such as Europe\/Brussels$/],
      [{ cutOff: '3pm' }, /at channels\.0\.cutOff: a time of day as HH:MM, 24-hour, such as 15:00$/],
      [{ cutOff: '24:00' }, /at channels\.0\.cutOff: a time of day as HH:MM/],
      [{ cutOffs: ['15:00', '9:30'] }, /at channels\.0\.cutOffs\.1: a time of day as HH:MM/],
      [{ cutOffs: '15:00' }, /at channels\.0\.cutOffs: /],
      [{ cutOffs: ['15:00'], cutOff: '15:00' }, /at channels\.0\.cutOff: give cutOffs or cutOff, not both$/],
      [{ instant: 'yes' }, /at channels\.0\.instant: /],
      [{ password: 'secret' }, /at channels\.0: .*password/],
    ];
    for (const [overrides, expected] of cases) {
      const lines = refusal(channel(overrides));
      assert.equal(lines.length, 1, `${JSON.stringify(overrides)}: ${lines.join(' | ')}`);
      assert.match(lines[0] as string, expected, JSON.stringify(overrides));
    }
  });

  it('several mistakes at once: one line each', () => {
    const lines = refusal(channel({ hostKey: 'md5', uploadDir: 'relative', payouts: ['USD'] }));
    assert.equal(lines.length, 3, lines.join('\n'));
  });
});
