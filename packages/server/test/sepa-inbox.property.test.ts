/**
 * The sepa-sftp inbox under random and mutated bank files (issue 37, item 4), on PGlite and
 * PostgreSQL: each run confirms a few payouts into a file of their own, then hands the inbox
 * (`applyFile`, what every listed file goes through) a pain.002 or camt.054 about them, written
 * with random statuses, returns and amounts and then perhaps mutated (a byte flipped, cut short,
 * text inserted, another namespace). Whatever the bytes: nothing throws; a file set aside changes
 * nothing at all (statuses, balances, events); a file applied leaves the books consistent (the
 * reserve is exactly what the still-PROCESSING payouts hold, every final payout has its one event).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { writeCamt054, writePain002 } from '@paygate/iso20022';
import { applyFile } from '../src/modules/channels/sepa-sftp/inbox.js';
import { batchOnce } from '../src/modules/channels/sepa-sftp/outbox.js';
import { isSepaSftp, type SepaSftpConnector } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import { fund } from './money-harness.js';
import { createMerchant, databases, startTestPlatform, type TestPlatform } from './harness.js';
import { freePort, sshKeyPair } from './sshd-fixture.js';

const DEBTOR = { name: 'Paygate Payouts SA', iban: 'DE89370400440532013000' };
const BATCH_MS = 600_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

const transactionStatus = fc.constantFrom('ACSC', 'ACCC', 'RJCT', 'PDNG', 'ACCP', 'RCVD');
const mutation = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.string({ maxLength: 12 }) }),
  fc.constant({ kind: 'namespace' as const }),
);

function mutate(xml: string, change: Mutation): Buffer {
  const bytes = Buffer.from(xml, 'utf8');
  switch (change.kind) {
    case 'none':
      return bytes;
    case 'flip': {
      const copy = Buffer.from(bytes);
      const at = change.at % copy.length;
      copy[at] = (copy[at] as number) ^ (1 << change.bit);
      return copy;
    }
    case 'cut':
      return bytes.subarray(0, change.at % bytes.length);
    case 'insert': {
      const at = change.at % bytes.length;
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(change.text, 'utf8'), bytes.subarray(at)]);
    }
    case 'namespace':
      return Buffer.from(xml.replace(/xsd:(pain\.002|camt\.054)\.001\.\d+/, 'xsd:camt.053.001.08'), 'utf8');
  }
}
type Mutation =
  | { kind: 'none' }
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'cut'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'namespace' };

for (const database of databases()) {
  describe(`sepa-sftp inbox, random and mutated files (${database})`, () => {
    let platform: TestPlatform;
    let connector: SepaSftpConnector;
    let merchantId: bigint;
    let run = 0;

    before(async () => {
      const dir = mkdtempSync(join(tmpdir(), 'paygate-sepa-property-'));
      const key = sshKeyPair();
      writeFileSync(join(dir, 'key'), key.privateKey, { mode: 0o600 });
      writeFileSync(
        join(dir, 'channels.json'),
        JSON.stringify({
          channels: [
            {
              name: 'bank',
              kind: 'sepa-sftp',
              payouts: ['EUR'],
              host: '127.0.0.1',
              // Nothing listens: the inbox is fed directly, nothing is uploaded.
              port: await freePort(),
              username: 'paygate',
              privateKeyFile: join(dir, 'key'),
              hostKey: key.fingerprint,
              uploadDir: '/upload',
              downloadDir: '/download',
              debtor: DEBTOR,
              batchEvery: `${BATCH_MS}ms`,
            },
          ],
        }),
      );
      platform = await startTestPlatform({ database, env: { PAYGATE_CHANNELS: join(dir, 'channels.json') } });
      const found = platform.services.channels.get('bank');
      assert.ok(found && isSepaSftp(found));
      connector = found;
      const merchant = await createMerchant(platform);
      await fund(platform, merchant, '1000000.00', 'EUR');
      merchantId = await platform.services.merchants.idOf(merchant.accessKey);
    });

    after(async () => {
      await platform?.close();
    });

    /** Three payouts confirmed and batched into a file of their own. */
    async function filed(): Promise<{ msgId: string; orders: { orderNo: string; amount: string }[] }> {
      const orders: { orderNo: string; amount: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const amount = `${1 + i}.${String(run % 100).padStart(2, '0')}`;
        const { payout } = await platform.services.payouts.create(merchantId, {
          merchantOrderNo: `P-${++run}`,
          currency: 'EUR',
          amount,
          webhookUrl: 'https://shop.example/webhook',
          payee: { name: 'Ana Souza', accountNumber: 'FR1420041010050500013M02606' },
        });
        await platform.services.payouts.confirm(merchantId, { orderNo: payout.orderNo });
        orders.push({ orderNo: payout.orderNo, amount });
      }
      platform.advance(BATCH_MS);
      const batch = await batchOnce(platform.services, connector, { log: quiet });
      assert.equal(batch.kind, 'built');
      return { msgId: batch.kind === 'built' ? batch.msgId : '', orders };
    }

    /** Everything a file could change: statuses, balances, events, bank words. */
    async function snapshot() {
      const q = async (sql: string) =>
        JSON.stringify((await platform.services.db.query(sql)).rows, (_k, v) =>
          typeof v === 'bigint' ? v.toString() : v,
        );
      return {
        payouts: await q('SELECT order_no, status, refund_no FROM payouts ORDER BY id'),
        balances: await q('SELECT id, balance FROM ledger_accounts ORDER BY id'),
        events: await q('SELECT count(*)::int AS n FROM events'),
        words: await q(
          'SELECT order_no, bank_status, bank_reason, return_ref FROM sepa_file_payouts ORDER BY order_no',
        ),
      };
    }

    /** The books hold: the reserve is what PROCESSING payouts hold; each final payout has its event. */
    async function consistent() {
      const reserved = await platform.services.db.query<{ balance: bigint }>(
        `SELECT balance FROM ledger_accounts WHERE merchant_id = $1 AND currency = 'EUR' AND kind = 'reserved'`,
        [merchantId],
      );
      const held = await platform.services.db.query<{ total: string | null }>(
        `SELECT sum(amount_minor + fee_minor)::text AS total FROM payouts WHERE merchant_id = $1 AND status IN ('PENDING', 'PROCESSING')`,
        [merchantId],
      );
      assert.equal(BigInt(reserved.rows[0]?.balance ?? 0n), BigInt(held.rows[0]?.total ?? '0'));
      const missing = await platform.services.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM payouts p WHERE p.merchant_id = $1 AND p.status IN ('SUCCEEDED', 'FAILED', 'REFUNDED')
            AND NOT EXISTS (SELECT 1 FROM events e WHERE e.order_type = 'PAYOUT' AND e.order_no = p.order_no AND e.status = p.status)`,
        [merchantId],
      );
      assert.equal(missing.rows[0]?.n, 0);
    }

    it('never throws; a file set aside changes nothing; an applied one leaves the books consistent', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.array(fc.option(transactionStatus, { nil: undefined }), { minLength: 3, maxLength: 3 }),
          fc.option(fc.constantFrom('ACSC', 'RJCT', 'PART'), { nil: undefined }),
          fc.array(fc.constantFrom('none', 'debit', 'return', 'partial-return'), { minLength: 3, maxLength: 3 }),
          mutation,
          async (isPain, statuses, group, entries, change) => {
            const file = await filed();
            const xml = isPain
              ? writePain002({
                  msgId: `R${run}`,
                  createdAt: new Date(),
                  originalMsgId: file.msgId,
                  groupStatus: group,
                  transactions: file.orders.flatMap((order, i) =>
                    statuses[i] === undefined
                      ? []
                      : [{ originalEndToEndId: order.orderNo, status: statuses[i] as string }],
                  ),
                })
              : writeCamt054({
                  msgId: `C${run}`,
                  createdAt: new Date(),
                  account: DEBTOR,
                  entries: file.orders.flatMap((order, i) => {
                    const entry = entries[i];
                    if (entry === 'none') return [];
                    const debit = entry === 'debit';
                    const amount = entry === 'partial-return' ? '0.01' : order.amount;
                    return [
                      {
                        status: 'BOOK',
                        creditDebit: debit ? ('DBIT' as const) : ('CRDT' as const),
                        amount,
                        currency: 'EUR',
                        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: debit ? 'ESCT' : 'RRTN' },
                        transactions: [
                          {
                            endToEndId: order.orderNo,
                            accountServicerRef: `RT${run}-${i}`,
                            amount,
                            returnReason: 'AC04',
                          },
                        ],
                      },
                    ];
                  }),
                });
            const bytes = mutate(xml, change);
            const before = await snapshot();
            const outcome = await applyFile(platform.services, connector, `f-${run}.xml`, bytes, { log: quiet });
            if (outcome.kind === 'set_aside') assert.deepEqual(await snapshot(), before);
            else assert.equal(outcome.kind, 'applied');
            await consistent();
          },
        ),
        { numRuns: 15 },
      );
    });
  });
}
