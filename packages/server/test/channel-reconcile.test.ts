/**
 * `paygate reconcile` (issue 13, item 6): a channel's daily settlement file against our books —
 * missing on either side, amount and status mismatches; exit 0 when clean, 1 otherwise.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseSettlement, reconcile, SETTLEMENT_HEADER } from '../src/modules/reconciliation/service.js';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  TEST_MASTER_KEY,
  type TestPlatform,
} from './harness.js';

const CLI = join(import.meta.dirname, '../src/cli/main.ts');

async function settledPayment(
  platform: TestPlatform,
  merchant: Awaited<ReturnType<typeof createMerchant>>,
  status: string,
) {
  const created = await post<{ orderNo: string; merchantId: string }>(
    platform,
    merchant,
    '/api/v1/payments',
    paymentInput({ amount: '10.00' }),
  );
  const orderNo = created.body.data?.orderNo as string;
  await platform.services.db.query(`UPDATE payments SET channel = 'psp' WHERE order_no = $1`, [orderNo]);
  const { merchant_id } = (
    await platform.services.db.query<{ merchant_id: bigint }>('SELECT merchant_id FROM payments WHERE order_no = $1', [
      orderNo,
    ])
  ).rows[0] as { merchant_id: bigint };
  await platform.services.payments.applyChannelReport(merchant_id, { orderNo, status }, 'psp');
  return orderNo;
}

/** Four orders final today at channel psp, and a file with one line of each mismatch kind. */
async function scenario(platform: TestPlatform) {
  const merchant = await createMerchant(platform);
  const ok = await settledPayment(platform, merchant, 'SUCCEEDED');
  const amount = await settledPayment(platform, merchant, 'SUCCEEDED');
  const status = await settledPayment(platform, merchant, 'FAILED');
  const absent = await settledPayment(platform, merchant, 'SUCCEEDED');
  const date = new Date(platform.services.now()).toISOString().slice(0, 10);
  const line = (ref: string, st: string, amt: string, paid = '') =>
    `charge,ch_${ref},${ref},${st},BRL,${amt},${paid},0.10,${Date.now()}`;
  const clean = [
    SETTLEMENT_HEADER,
    line(ok, 'paid', '10.00', '10.00'),
    line(amount, 'paid', '10.00', '10.00'),
    line(status, 'declined', '10.00'),
    line(absent, 'paid', '10.00', '10.00'),
  ].join('\n');
  const dirty = [
    SETTLEMENT_HEADER,
    line(ok, 'paid', '10.00', '10.00'),
    line(amount, 'paid', '10.00', '9.50'),
    line(status, 'paid', '10.00', '10.00'),
    line('P202601019999999999', 'paid', '5.00', '5.00'),
  ].join('\n');
  return { ok, amount, status, absent, date, clean, dirty };
}

for (const database of databases()) {
  describe(`channel reconciliation (${database})`, () => {
    it('finds each kind of mismatch, and none in a matching file', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const s = await scenario(platform);
        const clean = await reconcile(platform.services.db, 'psp', s.date, parseSettlement(s.clean));
        assert.deepEqual(clean.mismatches, []);
        assert.equal(clean.matched, 4);
        const report = await reconcile(platform.services.db, 'psp', s.date, parseSettlement(s.dirty));
        const found = report.mismatches.map((m) => `${m.kind} ${m.reference}`).sort();
        assert.deepEqual(
          found,
          [
            `amount ${s.amount}`,
            `missing_in_books P202601019999999999`,
            `missing_in_file ${s.absent}`,
            `status ${s.status}`,
          ].sort(),
        );
        const otherChannel = await reconcile(platform.services.db, 'other', s.date, parseSettlement(s.clean));
        assert.equal(otherChannel.mismatches.length, 4, 'the books of another channel hold none of these orders');
      } finally {
        await platform.close();
      }
    });

    it(
      'npx paygate reconcile: exit 0 when clean, 1 with mismatches, --json',
      { skip: database === 'pglite' ? 'the embedded database belongs to the server process' : false },
      async () => {
        const platform = await startTestPlatform({ database, config: { runWorkers: false } });
        try {
          const s = await scenario(platform);
          const dir = mkdtempSync(join(tmpdir(), 'paygate-reconcile-'));
          const cleanFile = join(dir, `${s.date}.csv`);
          const dirtyFile = join(dir, `dirty-${s.date}.csv`);
          writeFileSync(cleanFile, s.clean);
          writeFileSync(dirtyFile, s.dirty);
          const env = {
            ...process.env,
            DATABASE_URL: platform.config.databaseUrl,
            PAYGATE_MASTER_KEY: TEST_MASTER_KEY.toString('base64'),
            PAYGATE_DATA_DIR: dir,
          };
          const cli = (...args: string[]) =>
            spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, ...args], {
              env,
              encoding: 'utf8',
            });
          const ok = cli('reconcile', '--channel', 'psp', '--file', cleanFile);
          assert.equal(ok.status, 0, ok.stderr);
          assert.match(ok.stdout, /4 matched, 0 mismatches/);
          const bad = cli('reconcile', '--channel', 'psp', '--file', dirtyFile, '--json');
          assert.equal(bad.status, 1, bad.stderr);
          const report = JSON.parse(bad.stdout) as { mismatches: unknown[] };
          assert.equal(report.mismatches.length, 4);
          const table = cli('reconcile', '--channel', 'psp', '--file', dirtyFile);
          assert.equal(table.status, 1);
          assert.match(table.stdout, /missing_in_file/);
        } finally {
          await platform.close();
        }
      },
    );
  });
}
