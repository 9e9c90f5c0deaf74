/**
 * `paygate reconcile` (issue 13, item 6): a channel's daily settlement file against our books —
 * missing on either side, amount and status mismatches; exit 0 when clean, 1 otherwise.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writeCamt054 } from '@paygate/iso20022';
import {
  parseSettlement,
  reconcile,
  type ReconcileReport,
  SETTLEMENT_HEADER,
} from '../src/modules/reconciliation/service.js';
import { operator } from './backoffice-harness.js';
import {
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  TEST_MASTER_KEY,
  type TestPlatform,
} from './harness.js';
import { fund, payoutInput } from './money-harness.js';

const CLI = join(import.meta.dirname, '../src/cli/main.ts');
const DEBTOR = { name: 'Paygate Payouts SA', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

/** Runs a process to its end without blocking this one (the platform under test serves from it). */
function spawnAsync(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

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

    it('a charge whose create failed here is abandoned when unpaid there, missing_in_books when paid', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const db = platform.services.db;
        const date = new Date(platform.services.now()).toISOString().slice(0, 10);
        // Creates that answered CHANNEL_UNAVAILABLE (their orders removed), as the exchanges keep them.
        for (const orderNo of ['P202601010000000001', 'P202601010000000002', 'P202601010000000003']) {
          await db.query(
            `INSERT INTO channel_exchanges (channel, order_no, operation, sent, answered, error, latency_ms, at)
             VALUES ('psp', $1, 'createPayment', '{}', NULL, 'createPayment: timed out', 1500, now())`,
            [orderNo],
          );
        }
        const line = (ref: string, st: string, paid = '') => `charge,ch_${ref},${ref},${st},BRL,10.00,${paid},0.10,0`;
        const file = [
          SETTLEMENT_HEADER,
          line('P202601010000000001', 'expired'),
          line('P202601010000000002', 'canceled'),
          line('P202601010000000003', 'paid', '10.00'),
          line('P202601010000000004', 'expired'),
        ].join('\n');
        const report = await reconcile(db, 'psp', date, parseSettlement(file));
        assert.deepEqual(report.abandoned, [
          { reference: 'P202601010000000001', theirs: 'expired' },
          { reference: 'P202601010000000002', theirs: 'canceled' },
        ]);
        assert.deepEqual(
          report.mismatches.map((m) => `${m.kind} ${m.reference} ${m.theirs}`),
          [
            'missing_in_books P202601010000000003 paid', // money arrived for an order we removed
            'missing_in_books P202601010000000004 expired', // never asked for by this platform
          ],
        );
        const elsewhere = await reconcile(db, 'other', date, parseSettlement(file));
        assert.deepEqual(elsewhere.abandoned, [], "another channel's failed creates are not this one's");
      } finally {
        await platform.close();
      }
    });

    it('npx paygate reconcile while the platform runs: exit 0 when clean, 1 with mismatches, --json', async () => {
      // On the embedded database the running platform owns its data directory (this process holds
      // its lock): the command sends the file to the platform's operator API. On PostgreSQL it
      // reads the database itself.
      const dir = mkdtempSync(join(tmpdir(), 'paygate-reconcile-'));
      const platform = await startTestPlatform({
        database,
        config: { runWorkers: false, ...(database === 'pglite' ? { dataDir: join(dir, 'data') } : {}) },
      });
      try {
        const s = await scenario(platform);
        const cleanFile = join(dir, `${s.date}.csv`);
        const dirtyFile = join(dir, `dirty-${s.date}.csv`);
        writeFileSync(cleanFile, s.clean);
        writeFileSync(dirtyFile, s.dirty);
        const env = {
          ...process.env,
          NODE_OPTIONS: '',
          DATABASE_URL: platform.config.databaseUrl ?? '',
          PAYGATE_MASTER_KEY: TEST_MASTER_KEY.toString('base64'),
          PAYGATE_DATA_DIR: database === 'pglite' ? join(dir, 'data') : dir,
          PAYGATE_URL: platform.url,
          PAYGATE_ADMIN_TOKEN: platform.config.adminToken as string,
        };
        const cli = (...args: string[]) =>
          spawnAsync(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, ...args], env);
        const ok = await cli('reconcile', '--channel', 'psp', '--file', cleanFile);
        assert.equal(ok.status, 0, ok.stderr);
        assert.match(ok.stdout, new RegExp(`^psp ${s.date}: 4 lines, 4 matched, 0 mismatches`));
        const bad = await cli('reconcile', '--channel', 'psp', '--file', dirtyFile, '--json');
        assert.equal(bad.status, 1, bad.stderr);
        const report = JSON.parse(bad.stdout) as { date: string; mismatches: unknown[] };
        assert.equal(report.mismatches.length, 4);
        assert.equal(report.date, s.date);
        const table = await cli('reconcile', '--channel', 'psp', '--file', dirtyFile);
        assert.equal(table.status, 1);
        assert.match(table.stdout, /missing_in_file/);

        // A camt.054 whose name carries no date: its entries' booking date is the day.
        const entry = (orderNo: string, bookingDate: string) => ({
          status: 'BOOK',
          creditDebit: 'DBIT' as const,
          amount: '5.00',
          currency: 'EUR',
          bookingDate,
          bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
          transactions: [{ endToEndId: orderNo, amount: '5.00' }],
        });
        const notification = (entries: ReturnType<typeof entry>[]) =>
          writeCamt054({ msgId: 'CN-RECONCILE', createdAt: new Date(), account: DEBTOR, entries });
        const camt = join(dir, 'notification.camt054.xml');
        writeFileSync(camt, notification([entry('W202601019999999999', '2026-11-27')]));
        const booked = await cli('reconcile', '--channel', 'bank', '--file', camt, '--json');
        assert.equal(booked.status, 1, booked.stderr);
        const camtReport = JSON.parse(booked.stdout) as {
          date: string;
          mismatches: { kind: string; reference: string }[];
        };
        assert.equal(camtReport.date, '2026-11-27');
        assert.deepEqual(
          camtReport.mismatches.map((m) => `${m.kind} ${m.reference}`),
          ['missing_in_books W202601019999999999'],
        );
        const dated = await cli('reconcile', '--channel', 'bank', '--file', camt, '--date', '2026-11-26', '--json');
        assert.equal((JSON.parse(dated.stdout) as { date: string }).date, '2026-11-26', '--date decides');
        // Entries booked on two days: the command asks which.
        const twoDays = join(dir, 'two-days.xml');
        writeFileSync(
          twoDays,
          notification([entry('W202601019999999998', '2026-11-26'), entry('W202601019999999997', '2026-11-27')]),
        );
        const ambiguous = await cli('reconcile', '--channel', 'bank', '--file', twoDays);
        assert.equal(ambiguous.status, 2);
        assert.match(ambiguous.stderr, /give --date YYYY-MM-DD: the file books entries on 2026-11-26, 2026-11-27/);
      } finally {
        await platform.close();
      }
    });

    it('POST /admin/v1/reconciliation: the file as text, the day from the camt.054; a file that is neither CSV nor camt.054 is refused', async () => {
      const platform = await startTestPlatform({ database, config: { runWorkers: false } });
      try {
        const s = await scenario(platform);
        const call = async (body: unknown) => {
          const response = await fetch(`${platform.url}/admin/v1/reconciliation`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${platform.config.adminToken as string}`,
              'content-type': 'application/json',
            },
            body: JSON.stringify(body),
          });
          return { status: response.status, body: (await response.json()) as { msg: string; data?: ReconcileReport } };
        };
        const clean = await call({ channel: 'psp', file: s.clean, fileName: `${s.date}.csv` });
        assert.equal(clean.status, 200);
        assert.equal(clean.body.data?.matched, 4);
        assert.equal(clean.body.data?.date, s.date);
        const undated = await call({ channel: 'psp', file: s.clean, fileName: 'settlement.csv' });
        assert.equal(undated.status, 400);
        const garbage = await call({ channel: 'psp', file: 'not,a settlement', date: s.date });
        assert.equal(garbage.status, 400);
        assert.equal(garbage.body.msg, 'VALIDATION_FAILED');
      } finally {
        await platform.close();
      }
    });

    it("the back office reconciles against the channel's CSV or a bank's camt.054 (booked entries only), and refuses a file that is neither", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'paygate-reconcile-bo-'));
      const channelsFile = join(dir, 'channels.json');
      // Two channels whose simulator is never called (the files are given), each serving a currency
      // the orders below are not in: they are made in the sandbox, then given the channel's name.
      const channel = (name: string, currency: string, code: string) => ({
        name,
        kind: 'psp-sim',
        methods: [{ currency, code }],
        payouts: [currency],
        baseUrl: 'http://127.0.0.1:9',
        secret: 'a-simulator-secret-of-enough-length',
        timeoutMs: 1_000,
      });
      writeFileSync(
        channelsFile,
        JSON.stringify({ channels: [channel('psp', 'MXN', 'SPEI'), channel('bank', 'USD', 'CARD')] }),
      );
      const platform = await startTestPlatform({
        database,
        config: { runWorkers: false },
        env: { PAYGATE_CHANNELS: channelsFile },
      });
      try {
        const finance = await operator(platform, 'finance');
        const s = await scenario(platform);
        const run = async (body: Record<string, unknown>) => finance.boPost<ReconcileReport>('/reconciliation', body);

        const csv = await run({ channel: 'psp', date: s.date, settlement: s.clean });
        assert.equal(csv.status, 200, csv.text);
        assert.equal(csv.body.data?.matched, 4);
        assert.deepEqual(csv.body.data?.mismatches, []);

        // A payout the bank booked, and one it rejected before booking (in no camt.054).
        const merchant = await createMerchant(platform);
        await fund(platform, merchant, '500.00');
        const payout = async () => {
          const created = await post<{ orderNo: string }>(platform, merchant, '/api/v1/payouts', payoutInput());
          const orderNo = created.body.data?.orderNo as string;
          assert.equal((await post(platform, merchant, '/api/v1/payouts/confirm', { orderNo })).status, 200);
          await platform.services.db.query(`UPDATE payouts SET channel = 'bank' WHERE order_no = $1`, [orderNo]);
          return orderNo;
        };
        const [booked, rejected] = [await payout(), await payout()];
        await platform.services.db.transaction((tx) =>
          platform.services.payouts.applyChannelReports(tx, 'bank', [
            { orderNo: booked, status: 'SUCCEEDED' },
            { orderNo: rejected, status: 'FAILED' },
          ]),
        );
        const camt = writeCamt054({
          msgId: 'CN-BACKOFFICE',
          createdAt: new Date(),
          account: DEBTOR,
          entries: [
            {
              status: 'BOOK',
              creditDebit: 'DBIT',
              amount: '100.00',
              currency: 'BRL',
              bookingDate: s.date,
              bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
              transactions: [{ endToEndId: booked, amount: '100.00' }],
            },
          ],
        });
        const fromBank = await run({ channel: 'bank', date: s.date, settlement: camt });
        assert.equal(fromBank.status, 200, fromBank.text);
        assert.equal(fromBank.body.data?.matched, 1);
        assert.deepEqual(fromBank.body.data?.mismatches, [], 'the rejected payout is in no booked file');

        const neither = await run({ channel: 'bank', date: s.date, settlement: '<Document/>' });
        assert.equal(neither.status, 400);
        assert.equal((neither.body as unknown as { msg: string }).msg, 'VALIDATION_FAILED');
      } finally {
        await platform.close();
      }
    });
  });
}
