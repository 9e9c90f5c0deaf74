#!/usr/bin/env node
/**
 * `npm run chaos [-- --seed N] [--minutes M] [--out DIR] [--keep]`: a seeded fault campaign
 * across the whole platform (see README.md beside this folder). Prints the seed first (the
 * command that replays the schedule), the faults as they happen, then the figures and every
 * rule's result; exits 1 when a rule is broken, 2 when the campaign could not run.
 */
import { execSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { bankView, type ChannelVerdict, PixView, PspView } from './channels.js';
import { checkCampaign, checkLedger, readDatabase, type RuleResult } from './checker.js';
import { MerchantClient, onboard } from './client.js';
import { causedExits, FaultRunner } from './faults.js';
import { History } from './history.js';
import { Load, type Shop } from './load.js';
import { campaignSkip } from './postgres.js';
import { Receiver } from './receivers.js';
import { buildReport, formatMarkdown, formatReport, type Report } from './report.js';
import { randomSeed, Rng } from './rng.js';
import { makeSchedule } from './schedule.js';
import { PSP_SECRET, startTopology } from './topology.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ROOT = new URL('../../../', import.meta.url).pathname;

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    minutes: { type: 'string', default: '5' },
    out: { type: 'string' },
    merchants: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '6' },
    keep: { type: 'boolean', default: false },
    report: { type: 'string' },
  },
});

// `--report FILE`: a finished campaign's report.json as the Markdown tables of docs/reliability.md.
if (values.report !== undefined) {
  console.log(formatMarkdown(JSON.parse(readFileSync(values.report, 'utf8')) as Report));
  process.exit(0);
}

const seed = values.seed === undefined ? randomSeed() : Number(values.seed);
const minutes = Number(values.minutes);
if (!Number.isInteger(seed) || seed < 0 || !(minutes > 0)) {
  console.error(
    'usage: npm run chaos -- [--seed N] [--minutes M] [--out DIR] [--merchants N] [--concurrency N] [--keep]',
  );
  process.exit(2);
}
const PAYMENT_EXPIRY_MS = 45_000;
const RECOVERY_BOUND_MS = 90_000;
/** 1 + 3 + 60×5 s ≈ 5 minutes of retries: longer than any receiver fault and recovery together. */
const RETRY_SCHEDULE = ['1s', '2s', '3s', ...Array.from({ length: 60 }, () => '5s')].join(',');

const log = (line: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}`);

async function main(): Promise<number> {
  const skip = campaignSkip();
  if (skip) {
    console.error(`npm run chaos: ${skip}`);
    return 2;
  }
  log(`seed ${seed}, ${minutes} min (replay the schedule: npm run chaos -- --seed ${seed} --minutes ${minutes})`);
  const dir = mkdtempSync(join(tmpdir(), 'paygate-chaos-'));
  // The postgres user (PostgreSQL refuses root) must pass through to its own cluster's directory.
  chmodSync(dir, 0o711);
  const out = values.out ?? join(dir, 'results');
  mkdirSync(out, { recursive: true });
  const schedule = makeSchedule(seed, minutes, Number(values.merchants));
  writeFileSync(join(out, 'schedule.json'), `${JSON.stringify(schedule, null, 2)}\n`);

  const topology = await startTopology({
    dir,
    retrySchedule: RETRY_SCHEDULE,
    paymentExpiry: `${PAYMENT_EXPIRY_MS / 1000}s`,
    log,
  });
  const db = new pg.Pool({ connectionString: topology.postgres.url, max: 3, connectionTimeoutMillis: 10_000 });
  db.on('error', () => {});
  const history = new History();
  const shops: Shop[] = [];
  const receivers: Receiver[] = [];
  let exitCode = 2;
  try {
    const { cluster } = topology;
    for (let i = 0; i < Number(values.merchants); i++) {
      const merchant = await onboard(cluster.url, cluster.adminToken, `Chaos shop ${i + 1}`);
      const receiver = new Receiver(merchant.accessKey, merchant.webhookKeys);
      await receiver.start();
      receivers.push(receiver);
      shops.push({ client: new MerchantClient(merchant, cluster.url, history.record), receiver });
    }
    const probeMerchant = await onboard(cluster.url, cluster.adminToken, 'Chaos probe');
    const probeReceiver = new Receiver(probeMerchant.accessKey, probeMerchant.webhookKeys);
    await probeReceiver.start();
    const probe = { client: new MerchantClient(probeMerchant, cluster.url, history.record), receiver: probeReceiver };
    const merchantIds = new Map<string, string>(
      (await db.query('SELECT id, access_key FROM merchants')).rows.map((r) => [r.access_key, String(r.id)]),
    );

    const load = new Load({
      shops,
      history,
      rng: new Rng(seed, 3),
      controls: {
        psp: topology.simulators.psp.controlUrl,
        pix: topology.simulators.pix.controlUrl,
        bank: topology.simulators.bank.controlUrl,
      },
      concurrency: Number(values.concurrency),
      stepDeadlineMs: 60_000,
    });
    log(`${shops.length} merchants funded, ${values.concurrency} flows at once`);
    await load.start();
    const faults = new FaultRunner({
      topology,
      history,
      probe,
      receivers,
      merchantIds,
      db,
      recoveryBoundMs: RECOVERY_BOUND_MS,
      log,
    });
    faults.start(schedule);

    // The ledger's rules, checked on the live database while the faults go on.
    // And every process runs: one down at two checks in a row (a fault's restart takes seconds) is
    // said at once, not only by the exit count at the end.
    const during: { at: number; results: RuleResult[] }[] = [];
    const down = new Map<string, number>();
    const endAt = Date.now() + minutes * 60_000;
    while (Date.now() < endAt) {
      await sleep(Math.min(30_000, Math.max(0, endAt - Date.now())));
      const results = await checkLedger(db).catch(() => undefined);
      if (results) during.push({ at: Date.now(), results });
      const processes = [
        ...[...cluster.apis, ...cluster.workers, cluster.haproxy].map((p) => ({ name: p.name, up: p.running })),
        ...Object.values(topology.simulators).map((s) => ({ name: s.name, up: s.alive })),
      ];
      for (const { name, up } of processes) {
        const times = up ? 0 : (down.get(name) ?? 0) + 1;
        down.set(name, times);
        if (times === 2) {
          history.anomaly(`${name} was not running at two checks in a row`);
          log(`${name} is not running (and no fault is restarting it)`);
        }
      }
    }
    log('time is up: healing the fault in progress, then the last flows finish');
    await faults.stop();
    await load.stop();
    log('settling: waiting for the outbox to drain and open payments to expire');
    await settle(db, PAYMENT_EXPIRY_MS + 20_000, 240_000);

    const state = await readDatabase(db);
    const bank = await bankView(topology.simulators.bank.controlUrl);
    const psp = new PspView(topology.pspUrl, PSP_SECRET);
    const pix = new PixView(topology.pixChannel);
    const channelVerdicts = new Map<string, ChannelVerdict>();
    for (const record of history.orders) {
      if (!record.orderNo) continue;
      if (record.channel === 'psp') {
        channelVerdicts.set(
          record.orderNo,
          record.type === 'PAYMENT' ? await psp.payment(record.orderNo) : await psp.payout(record.orderNo),
        );
      } else if (record.channel === 'pix') {
        channelVerdicts.set(record.orderNo, await pix.payment(record.txid));
      }
    }
    const apiBalances = new Map<string, { currency: string; available: string; reserved: string }[]>();
    for (const shop of [...shops, probe]) {
      const answer = await shop.client.get('/api/v1/balances', '');
      const data = answer?.body.data as { currency: string; available: string; reserved: string }[] | undefined;
      if (answer?.status === 200 && Array.isArray(data)) apiBalances.set(shop.client.merchant.accessKey, data);
      else history.anomaly(`balances of ${shop.client.merchant.accessKey}: ${answer?.status}`);
    }
    const exits = new Map<string, { exits: number; caused: number }>();
    for (const proc of [...cluster.apis, ...cluster.workers, cluster.haproxy]) {
      exits.set(proc.name, { exits: proc.exits.length, caused: causedExits.get(proc.name) ?? 0 });
    }
    for (const simulator of Object.values(topology.simulators)) {
      exits.set(simulator.name, {
        exits: simulator.exits.length,
        caused: simulator.exits.filter((e) => e.expected).length,
      });
    }
    const deliveries = new Map([...receivers, probeReceiver].map((r) => [r.url, r.deliveries]));
    const rules = checkCampaign({
      history,
      db: state,
      deliveries,
      channelVerdicts,
      bank,
      apiBalances,
      exits,
      recoveryBoundMs: RECOVERY_BOUND_MS,
    });
    const duringViolations = during.flatMap(({ at, results }) =>
      results.filter((r) => r.violations > 0).map((r) => `${new Date(at).toISOString()} ${r.rule}: ${r.examples[0]}`),
    );
    rules.push({
      rule: 'the ledger rules hold at every check during the campaign',
      checked: during.length,
      violations: duringViolations.length,
      examples: duringViolations.slice(0, 10),
    });
    const report = buildReport({
      seed,
      minutes,
      commit: gitCommit(),
      machine: `${hostname()}, ${cpus().length} cores`,
      history,
      db: state,
      rules,
      totals: {
        merchants: shops.length,
        'orders created': state.orders.length,
        events: state.events.length,
        'webhook deliveries received': [...receivers, probeReceiver].reduce((n, r) => n + r.deliveries.length, 0),
        requests: history.attempts.length,
        faults: history.faults.length,
        'flows run': Object.values(load.flows).reduce((a, b) => a + b, 0),
        'ledger checks during': during.length,
      },
    });
    writeFileSync(join(out, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(out, 'faults.json'), `${JSON.stringify(history.faults, null, 2)}\n`);
    writeFileSync(join(out, 'report.md'), `${formatMarkdown(report)}\n`);
    console.log(`\n${formatReport(report)}`);
    if (values.out !== undefined) log(`results in ${out}`);
    log(`replay the schedule: npm run chaos -- --seed ${seed} --minutes ${minutes}`);
    exitCode = report.holds ? 0 : 1;
  } finally {
    for (const shop of shops) shop.client.close();
    await Promise.all(receivers.map((r) => r.close()));
    await db.end().catch(() => {});
    await topology.stop();
    // A run that held leaves only its results (with --out); one that did not keeps everything.
    if (exitCode === 0 && !values.keep) rmSync(dir, { recursive: true, force: true });
    else log(`the run's directory is kept: ${dir} (logs in ${topology.logDir})`);
  }
  return exitCode;
}

/**
 * Waits until nothing is left to happen by itself: no event waiting for delivery, and no payment
 * open past its expiry (the sweeper's), for at least `minMs`; at most `maxMs`.
 */
async function settle(db: pg.Pool, minMs: number, maxMs: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < maxMs) {
    const pending = await db
      .query<{ events: number; payments: number }>(
        `SELECT (SELECT count(*)::int FROM events WHERE delivery_status = 'pending') AS events,
                (SELECT count(*)::int FROM payments WHERE status IN ('PENDING', 'PROCESSING')) AS payments`,
      )
      .catch(() => undefined);
    const row = pending?.rows[0];
    if (row && row.events === 0 && row.payments === 0 && Date.now() - started >= Math.min(minMs, 5_000)) return;
    if (row && row.events === 0 && Date.now() - started >= minMs) return;
    await sleep(1000);
  }
  log(`still settling after ${maxMs / 1000} s; checking as it is`);
}

function gitCommit(): string {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

// Ctrl-C or a SIGTERM ends the campaign at once; the exit handlers stop its PostgreSQL, and the
// other processes are its children.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    process.exit(2);
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
