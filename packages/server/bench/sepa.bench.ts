// `npm run bench -- sepa` (issue 37): SEPA payouts as ISO 20022 files through `paygate-bank` (the
// reference bank, its own process, on free ports), on PostgreSQL (when one answers) and on the
// embedded default (PGlite, a data directory on disk). The platform runs in this process with its
// workers off, so that each file step is timed exactly: the bench calls the connector's own steps
// (outbox.ts `batchOnce` and `uploadOnce`, inbox.ts `readInboxOnce`) where the workers would.
//
// A merchant is funded; then, twice, BENCH_SEPA_PAYOUTS (default 10,000) EUR payouts are created
// and confirmed through the payout service (not measured) and their file goes out and a status
// file comes back, once as a pain.002 and once as a camt.054:
//   (a) file out: from the step that closes the due batch to its pain.001 built, validated against
//       the EPC XSD, stored with its payouts (one transaction) and uploaded to the bank over SFTP
//       (`.part`, then renamed into /upload). Target ≤ 5 s for 10,000. The bank then checks the
//       file on its own (XSD and its rules) and must take it (not timed).
//   (b) status in: a status file of every payout, as the bank writes them (a pain.002 with GrpSts
//       and every TxSts ACSC; a camt.054 with one DBIT BOOK entry per payout), placed in the
//       bank's /download (renamed in whole); from the poll that lists it to every payout SUCCEEDED
//       with its event written (the file's one transaction committed). Target ≤ 10 s for 10,000.
//       The same file is then read again over SFTP alone, to say how much of (b) that is.
//   The same for a camt.053 statement of one DBIT entry per payout (target ≤ 10 s on PostgreSQL,
//   ≤ 15 s embedded) and for a camt.053 booking the whole file as one entry (NtryDtls/Btch: its
//   MsgId, PmtInfId, count and total; target ≤ 5 s).
//   Then, no target: the bank's own pain.002 and camt.054 of every file (held until then) read and
//   recorded by one poll; every payout is SUCCEEDED already, nothing changes.
//   (c) memory of the platform process (this one) during each: peak resident set (VmHWM, reset
//       before the step through /proc/self/clear_refs) and peak V8 heap used (the heap before each
//       garbage collection, from v8.GCProfiler, and samples every 10 ms).
// A warm-up file of 20 payouts goes the whole way first (connection, XSD load, JIT), not measured.
//
// Then SEPA Instant, on a channel and a bank of its own: after a warm-up payout the whole way,
// BENCH_SEPA_INSTANT (default 30) payouts confirmed 700 ms apart with the channel's file steps running as the server runs them; per
// payout, confirm → its file uploaded (target ≤ 2 s) and confirm → SUCCEEDED (the bank's instant
// booking read back), median and worst.
//
// BENCH_SEPA_KINDS=camt.053,batch measures some of the status files only; BENCH_SEPA_ONLY=files or
// instant runs one part. BENCH_SEPA_PAYOUTS=1000 makes a smoke run (its figures are printed, the verdicts need 10,000);
// BENCH_DATABASE=postgres|pglite runs one database only; BENCH_CPU_PROF=<dir> writes a CPU profile
// of each measured step there. Nothing here asserts a time.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { type CamtEntry, centsToEur, writeCamt053, writeCamt054, writePain002 } from '@paygate/iso20022';
import { parseConfig } from '../src/config.js';
import { readInboxOnce } from '../src/modules/channels/sepa-sftp/inbox.js';
import { batchOnce, type FileLog, type FileStepOptions, uploadOnce } from '../src/modules/channels/sepa-sftp/outbox.js';
import { startSepaChannels } from '../src/modules/channels/sepa-sftp/loop.js';
import { isSepaSftp, type SepaSftpConnector } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import { type Platform, startPlatform } from '../src/platform.js';
import { createMerchant } from '../test/harness.js';
import { fund } from '../test/money-harness.js';
import { sshKeyPair } from '../test/sshd-fixture.js';
import { postgresUrl, startChild } from './support.js';

const PAYOUTS = Number(process.env.BENCH_SEPA_PAYOUTS ?? 10_000);
const WARM_UP = 20;
const FULL = 10_000;
const TARGET_FILE_OUT_S = 5;
const TARGET_STATUS_IN_S = 10;
/** A camt.053 of 10,000 entries: ≤ 10 s on PostgreSQL, ≤ 15 s embedded (issue 49). */
const TARGET_STATEMENT_S = { postgres: 10, pglite: 15 } as const;
/** A batch booking of a 10,000-payout file: ≤ 5 s (issue 49). */
const TARGET_BATCH_S = 5;
/** Creates and confirms in flight at once (not measured; PGlite takes them one at a time anyway). */
const CREATE_CONCURRENCY = 8;
/** The channel's batchEvery: longer than the creates take, so that one batch holds every payout. */
const BATCH_EVERY_MS = 3_600_000;
const AMOUNT = '10.00';
const IBANS = ['FR1420041010050500013M02606', 'DE02120300000000202051', 'NL91ABNA0417164300', 'BE68539007547034'];
const NAMES = ['José Müller & Søn', 'Zoë Ærøskøbing–Straße', 'Ana Souza', "O'Brien (Ltd.) #42", 'Łukasz Żółć'];
const MASTER_KEY = Buffer.alloc(32, 13).toString('base64');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const size = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

// A collection before each measured step, so that each starts from what is live.
v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Peak resident set (VmHWM) and current (VmRSS) of this process, in bytes (Linux /proc). */
function residentSet(): { peak: number; now: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** What a step used: its time, the resident set and V8 heap before it and at their peaks during it. */
interface Measured<T> {
  readonly value: T;
  readonly seconds: number;
  readonly rssBefore: number;
  readonly rssPeak: number;
  readonly heapBefore: number;
  readonly heapPeak: number;
  /** Whether the peak resident set is this step's own (VmHWM reset before it); else the process's. */
  readonly rssPeakOwn: boolean;
  /** CPU seconds this process used during the step (its threads: the XSD check runs in a worker). */
  readonly cpuSeconds: number;
  /** CPU seconds of the bank's process during the step. */
  readonly bankCpuSeconds: number | undefined;
  /**
   * CPU seconds of the PostgreSQL server processes of the database during the step, at least (a
   * connection closed before its end is not counted); none on PGlite.
   */
  readonly databaseCpuSeconds: number | undefined;
}

/** The other processes a step's CPU time is read of: the bank, PostgreSQL's backends. */
interface Watched {
  readonly bank: number | undefined;
  readonly backends: () => Promise<number[]>;
}

/** CPU seconds each of these processes used so far, by pid (Linux /proc, clock ticks of 1/100 s). */
function cpuByPid(pids: readonly number[]): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of pids) {
    try {
      // After the command name: utime is the 12th field, stime the 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      used.set(pid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // gone, or no /proc
    }
  }
  return used;
}

/**
 * CPU seconds used between two readings: a process in both counts its difference, one that came
 * meanwhile all it used (a connection the pool opened during the step); one gone by the second
 * reading is not counted (so the figure is a lower bound). Undefined when nothing could be read.
 */
function cpuBetween(before: Map<number, number>, after: Map<number, number>): number | undefined {
  if (after.size === 0) return undefined;
  let total = 0;
  for (const [pid, at] of after) total += at - (before.get(pid) ?? 0);
  return total;
}

/** BENCH_CPU_PROF=<dir>: a V8 CPU profile of each measured step is written there. */
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
let profiles = 0;

/** Runs `step` after a collection, timing it and following this process's memory. */
async function measure<T>(name: string, watched: Watched, step: () => Promise<T>): Promise<Measured<T>> {
  gc();
  const session = PROFILE_DIR ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  let rssPeakOwn = true;
  try {
    // "5" resets the peak resident set size to the current one (proc(5), clear_refs).
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    rssPeakOwn = false;
  }
  const rssBefore = residentSet().now;
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 10);
  const profiler = new v8.GCProfiler();
  profiler.start();
  const bank = watched.bank === undefined ? [] : [watched.bank];
  const backends = await watched.backends();
  const bankBefore = cpuByPid(bank);
  const databaseBefore = cpuByPid(backends);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let value: T;
  try {
    value = await step();
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const rssPeak = residentSet().peak;
  const cpu = process.cpuUsage(cpuBefore);
  const bankCpuSeconds = cpuBetween(bankBefore, cpuByPid(bank));
  const databaseCpuSeconds = cpuBetween(
    databaseBefore,
    cpuByPid([...new Set([...backends, ...(await watched.backends())])]),
  );
  const collections = profiler.stop();
  if (session && PROFILE_DIR) {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    writeFileSync(join(PROFILE_DIR, `sepa-${++profiles}-${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  for (const collection of collections?.statistics ?? []) {
    heapPeak = Math.max(heapPeak, collection.beforeGC.heapStatistics.usedHeapSize);
  }
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  return {
    value,
    seconds,
    rssBefore,
    rssPeak,
    heapBefore,
    heapPeak,
    rssPeakOwn,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    bankCpuSeconds,
    databaseCpuSeconds,
  };
}

/** The steps log nothing here: a failure shows in their result, which the bench checks. */
const quiet: FileLog = { info: () => {}, warn: () => {}, error: () => {} };
const stepOptions: FileStepOptions = { log: quiet };

interface Bank {
  readonly child: ChildProcess;
  readonly dataDir: string;
  readonly control: string;
  readonly download: string;
  /** The channel snippet it printed (channel.json). */
  readonly channel: Record<string, unknown>;
}

/** `paygate-bank` as its own process on free ports, the platform's public key its authorized key. */
async function startBank(dir: string): Promise<Bank> {
  const keys = sshKeyPair();
  const privateKeyFile = join(dir, 'platform_ed25519');
  writeFileSync(privateKeyFile, keys.privateKey, { mode: 0o600 });
  writeFileSync(`${privateKeyFile}.pub`, `${keys.publicKey}\n`);
  const dataDir = join(dir, 'bank');
  const { child, line } = await startChild(
    'packages/bank-simulator/src/main.ts',
    {
      HOST: '127.0.0.1',
      BANK_SFTP_PORT: '0',
      BANK_PORT: '0',
      BANK_DATA_DIR: dataDir,
      BANK_AUTHORIZED_KEY: `${privateKeyFile}.pub`,
      BANK_BOOK_AFTER: '500ms',
      BANK_TICK_MS: '100',
      LOG_LEVEL: 'info',
    },
    (text) => text.includes('"paygate-bank listening"'),
  );
  const { controlUrl } = JSON.parse(line) as { controlUrl: string };
  const channel = JSON.parse(readFileSync(join(dataDir, 'channel.json'), 'utf8')) as Record<string, unknown>;
  return {
    child,
    dataDir,
    control: `${controlUrl}/control`,
    download: join(dataDir, 'sftp', String(channel.username), 'download'),
    channel,
  };
}

/**
 * One request to the bank's controls on a connection of its own: a kept-alive one can be closed
 * by the bank while the bench is busy elsewhere (minutes of creates), and fetch would then fail.
 */
function bankControl(bank: Bank, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${bank.control}${path}`,
      {
        method,
        agent: false,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200) reject(new Error(`bank ${method} ${path}: ${response.statusCode} ${text}`));
          else resolve(JSON.parse(text) as unknown);
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

interface BankFiles {
  uploads: { msgId: string; outcome: string; reason?: string; detail?: string; transfers: number }[];
  statusFiles: { name: string; kind: string; about: string }[];
}

const bankFiles = async (bank: Bank) => (await bankControl(bank, 'GET', '/files')) as BankFiles;

/** Waits until the bank took the file `msgId` (its own XSD and rules); throws when it refused it. */
async function bankTook(bank: Bank, msgId: string, transfers: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const upload = (await bankFiles(bank)).uploads.find((u) => u.msgId === msgId);
    if (upload) {
      if (upload.outcome !== 'accepted' || upload.transfers !== transfers) {
        throw new Error(`the bank did not take ${msgId}: ${JSON.stringify(upload)}`);
      }
      return;
    }
    if (Date.now() > deadline) throw new Error(`the bank never took ${msgId}`);
    await sleep(50);
  }
}

/** Waits until the bank wrote `count` status files about `msgId` into /download. */
async function bankAnswered(bank: Bank, msgId: string, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while ((await bankFiles(bank)).statusFiles.filter((f) => f.about.includes(msgId)).length < count) {
    if (Date.now() > deadline) throw new Error(`the bank never answered ${msgId}`);
    await sleep(50);
  }
}

/** A platform in this process on the database, with the bank's channel; its clock can be moved on. */
async function startBenchPlatform(
  dir: string,
  bank: Bank,
  databaseUrl: string | undefined,
  channel: Record<string, unknown> = { batchEvery: `${BATCH_EVERY_MS}ms`, pollEvery: '1h' },
): Promise<{ platform: Platform; connector: SepaSftpConnector; advance: (ms: number) => void }> {
  const channels = join(dir, 'channels.json');
  writeFileSync(channels, JSON.stringify({ channels: [{ ...bank.channel, ...channel, timeoutMs: 60_000 }] }));
  const storage: Record<string, string> = {};
  if (databaseUrl) storage.DATABASE_URL = databaseUrl;
  else {
    storage.PAYGATE_DATA_DIR = join(dir, 'platform');
    mkdirSync(storage.PAYGATE_DATA_DIR);
  }
  let offset = 0;
  const config = parseConfig({
    ...storage,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    PAYGATE_RATE_LIMIT: '0',
    // The bench calls the file steps itself, where the workers would.
    PAYGATE_WORKERS: 'false',
    PAYGATE_MASTER_KEY: MASTER_KEY,
    PAYGATE_ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
    PAYGATE_CHANNELS: channels,
  });
  const platform = await startPlatform(config, { logger: false, now: () => Date.now() + offset });
  const connector = platform.services.channels.get('bank');
  if (!connector || !isSepaSftp(connector)) throw new Error('no sepa-sftp channel "bank"');
  return { platform, connector, advance: (ms) => (offset += ms) };
}

/** Creates and confirms `count` EUR payouts to the bank channel, CREATE_CONCURRENCY at a time. */
async function confirmedPayouts(platform: Platform, merchantId: bigint, run: string, count: number): Promise<string[]> {
  const orderNos: string[] = new Array<string>(count);
  let next = 0;
  const one = async () => {
    for (let i = next++; i < count; i = next++) {
      const { payout } = await platform.services.payouts.create(merchantId, {
        merchantOrderNo: `${run}-${i}`,
        currency: 'EUR',
        amount: AMOUNT,
        webhookUrl: 'https://shop.example/webhook/payout',
        payee: {
          name: NAMES[i % NAMES.length],
          accountNumber: IBANS[i % IBANS.length],
          ...(i % 2 === 0 ? { bankCode: 'COBADEFFXXX' } : {}),
        },
      });
      const confirmed = await platform.services.payouts.confirm(merchantId, { orderNo: payout.orderNo });
      if (confirmed.status !== 'PROCESSING') throw new Error(`payout ${payout.orderNo} is ${confirmed.status}`);
      orderNos[i] = payout.orderNo;
    }
  };
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, one));
  return orderNos;
}

/** How many of these payouts are SUCCEEDED, and how many SUCCEEDED events they have. */
async function settled(platform: Platform, orderNos: readonly string[]): Promise<{ payouts: number; events: number }> {
  const { db } = platform.services;
  const payouts = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM payouts WHERE order_no = ANY($1::text[]) AND status = 'SUCCEEDED'`,
    [orderNos],
  );
  const events = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM events
      WHERE order_type = 'PAYOUT' AND order_no = ANY($1::text[]) AND status = 'SUCCEEDED'`,
    [orderNos],
  );
  return { payouts: Number(payouts.rows[0]?.n ?? 0), events: Number(events.rows[0]?.n ?? 0) };
}

/** The bank's camt.054 for these payouts: one DBIT BOOK entry each, as `paygate-bank` writes them. */
function camt054Of(bank: Bank, msgId: string, orderNos: readonly string[]): string {
  const debtor = bank.channel.debtor as { name: string; iban: string; bic: string };
  const day = new Date().toISOString().slice(0, 10);
  return writeCamt054({
    msgId: `BENCH${msgId.slice(2, 30)}`,
    createdAt: new Date(),
    account: debtor,
    entries: orderNos.map((orderNo, i): CamtEntry => ({
      status: 'BOOK',
      creditDebit: 'DBIT',
      accountServicerRef: `BENCH-${i}`,
      amount: AMOUNT,
      currency: 'EUR',
      bookingDate: day,
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
      transactions: [{ endToEndId: orderNo, accountServicerRef: `BENCH-${i}`, amount: AMOUNT, currency: 'EUR' }],
    })),
  });
}

/** The day's camt.053 of these payouts: the same DBIT BOOK entries as the camt.054, with the day's balances. */
function camt053Of(bank: Bank, msgId: string, orderNos: readonly string[]): string {
  const debtor = bank.channel.debtor as { name: string; iban: string; bic: string };
  const day = new Date().toISOString().slice(0, 10);
  const cents = orderNos.length * 1_000;
  return writeCamt053({
    msgId: `BENCHS${msgId.slice(2, 30)}`,
    createdAt: new Date(),
    account: debtor,
    balances: [
      { type: 'OPBD', amount: centsToEur(cents), currency: 'EUR', creditDebit: 'CRDT', date: day },
      { type: 'CLBD', amount: '0.00', currency: 'EUR', creditDebit: 'CRDT', date: day },
    ],
    entries: orderNos.map((orderNo, i): CamtEntry => ({
      status: 'BOOK',
      creditDebit: 'DBIT',
      accountServicerRef: `BENCHS-${msgId.slice(-8)}-${i}`,
      amount: AMOUNT,
      currency: 'EUR',
      bookingDate: day,
      bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
      transactions: [
        { endToEndId: orderNo, accountServicerRef: `BENCHS-${msgId.slice(-8)}-${i}`, amount: AMOUNT, currency: 'EUR' },
      ],
    })),
  });
}

/** A camt.053 booking the whole file as one DBIT entry (`NtryDtls/Btch`: its MsgId, PmtInfId, count and total). */
function batchBookingOf(bank: Bank, msgId: string, count: number): string {
  const debtor = bank.channel.debtor as { name: string; iban: string; bic: string };
  const day = new Date().toISOString().slice(0, 10);
  const total = centsToEur(count * 1_000);
  return writeCamt053({
    msgId: `BENCHB${msgId.slice(2, 30)}`,
    createdAt: new Date(),
    account: debtor,
    balances: [
      { type: 'OPBD', amount: total, currency: 'EUR', creditDebit: 'CRDT', date: day },
      { type: 'CLBD', amount: '0.00', currency: 'EUR', creditDebit: 'CRDT', date: day },
    ],
    entries: [
      {
        status: 'BOOK',
        creditDebit: 'DBIT',
        accountServicerRef: `BENCHB-${msgId.slice(-12)}`,
        amount: total,
        currency: 'EUR',
        bookingDate: day,
        bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'ESCT' },
        batches: [
          { msgId, paymentInformationId: msgId, numberOfTransactions: count, totalAmount: total, creditDebit: 'DBIT' },
        ],
        transactions: [],
      },
    ],
  });
}

/** Puts a status file into the bank's /download whole (written beside it, then renamed in). */
function placeStatusFile(bank: Bank, name: string, xml: string): void {
  const staging = join(bank.dataDir, 'bench-staging');
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, name), xml);
  renameSync(join(staging, name), join(bank.download, name));
}

/** The bank's pain.002 for these payouts: group and every transaction ACSC, as `paygate-bank` writes it. */
function pain002Of(msgId: string, orderNos: readonly string[]): string {
  return writePain002({
    msgId: `BENCH${msgId.slice(2, 30)}`,
    createdAt: new Date(),
    originalMsgId: msgId,
    groupStatus: 'ACSC',
    transactions: orderNos.map((orderNo) => ({ originalEndToEndId: orderNo, status: 'ACSC' })),
  });
}

/**
 * The status messages the platform reads, each measured on a file of its own: a pain.002, a
 * camt.054, a camt.053 of one entry per payout, and a camt.053 booking the whole file as a batch.
 */
const ALL_STATUS_KINDS = ['pain.002', 'camt.054', 'camt.053', 'batch'] as const;
type StatusKind = (typeof ALL_STATUS_KINDS)[number];
/** BENCH_SEPA_KINDS=camt.053,batch measures some of them only (a shorter run). */
const STATUS_KINDS: readonly StatusKind[] = (() => {
  const named = (process.env.BENCH_SEPA_KINDS ?? '')
    .split(',')
    .map((kind) => kind.trim())
    .filter(Boolean);
  if (named.length === 0) return ALL_STATUS_KINDS;
  const unknown = named.filter((kind) => !(ALL_STATUS_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0)
    throw new Error(`BENCH_SEPA_KINDS: no kind ${unknown.join(', ')}; kinds: ${ALL_STATUS_KINDS.join(', ')}`);
  return ALL_STATUS_KINDS.filter((kind) => named.includes(kind));
})();

/** What the file-out step did: the file's MsgId, and the seconds of its two steps. */
interface FileOut {
  readonly msgId: string;
  /** `batchOnce`: payouts assigned, pain.001 written, XSD-validated and stored (one transaction). */
  readonly buildSeconds: number;
  /** `uploadOnce`: leased, written as `.part` over SFTP, renamed, marked uploaded. */
  readonly uploadSeconds: number;
}

/** One measured file: out to the bank, then a status file of the given kind in. */
interface FileFigures {
  readonly kind: StatusKind;
  readonly out: Measured<FileOut>;
  /** The pain.001's size. */
  readonly bytes: number;
  readonly in: Measured<unknown>;
  /** The status file's size. */
  readonly statusBytes: number;
  /** The status file read again over the channel's SFTP session alone (part of what `in` does). */
  readonly readSeconds: number;
}

interface Figures {
  /** The machine's one-minute load average when the database's run began. */
  readonly load: number;
  readonly files: readonly FileFigures[];
  /** The bank's own pain.002 and camt.054 of every measured file, read when every payout had settled. */
  readonly again: Measured<unknown>;
}

async function benchmark(database: Awaited<ReturnType<typeof postgresUrl>>): Promise<Figures> {
  const load = loadavg()[0] ?? NaN;
  const dir = mkdtempSync(join(tmpdir(), 'paygate-bench-sepa-'));
  let bank: Bank | undefined;
  let started: Awaited<ReturnType<typeof startBenchPlatform>> | undefined;
  try {
    bank = await startBank(dir);
    started = await startBenchPlatform(dir, bank, database?.url);
    const { platform, connector, advance } = started;
    const { db } = platform.services;
    const watched: Watched = {
      bank: bank.child.pid,
      // PostgreSQL: the server processes of this database's connections; PGlite runs in this process.
      backends: async () =>
        db.kind === 'postgres'
          ? (
              await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()')
            ).rows.map((row) => row.pid)
          : [],
    };
    const merchant = await createMerchant(platform, 'SEPA bench');
    const merchantId = await platform.services.merchants.idOf(merchant.accessKey);
    // amount + the EUR payout fee (0.50) each, with room to spare.
    const total = PAYOUTS * STATUS_KINDS.length + WARM_UP;
    await fund(platform, merchant, (total * 11 + 100).toFixed(2), 'EUR');

    /**
     * Closes the due batch and uploads it; throws unless it built one file of `count` and uploaded
     * it. Says how long each of the two steps took.
     */
    const fileOut = async (count: number): Promise<FileOut> => {
      const started = performance.now();
      const batch = await batchOnce(platform.services, connector, stepOptions);
      if (batch.kind !== 'built' || batch.transactions !== count) throw new Error(`batch: ${JSON.stringify(batch)}`);
      const built = performance.now();
      const upload = await uploadOnce(platform.services, connector, stepOptions);
      if (upload.failed.length > 0 || !upload.uploaded.includes(batch.msgId)) {
        throw new Error(`upload: ${JSON.stringify(upload)}`);
      }
      return {
        msgId: batch.msgId,
        buildSeconds: (built - started) / 1000,
        uploadSeconds: (performance.now() - built) / 1000,
      };
    };
    /** One poll; throws unless it applied exactly `files` files and set none aside. */
    const poll = async (files: number) => {
      const inbox = await readInboxOnce(platform.services, connector, stepOptions);
      if (inbox.applied.length !== files || inbox.setAside.length > 0) {
        throw new Error(`inbox: ${JSON.stringify(inbox)}`);
      }
    };

    // Warm-up, the whole way through the bank's own answers: not measured.
    const warm = await confirmedPayouts(platform, merchantId, 'WARM', WARM_UP);
    advance(BATCH_EVERY_MS);
    const warmMsgId = (await fileOut(WARM_UP)).msgId;
    await bankTook(bank, warmMsgId, WARM_UP);
    await bankAnswered(bank, warmMsgId, 2);
    await poll(2);
    if ((await settled(platform, warm)).payouts !== WARM_UP) throw new Error('warm-up payouts not SUCCEEDED');

    // The bank keeps its answers to the measured files until released: the status files are ours first.
    await bankControl(bank, 'POST', '/booking', { mode: 'hold' });
    const files: FileFigures[] = [];
    for (const kind of STATUS_KINDS) {
      const createdAt = performance.now();
      const orderNos = await confirmedPayouts(platform, merchantId, `RUN-${kind}`, PAYOUTS);
      console.log(
        `  (${PAYOUTS.toLocaleString('en')} payouts created and confirmed in ${((performance.now() - createdAt) / 1000).toFixed(0)} s, not measured)`,
      );
      advance(BATCH_EVERY_MS); // the batch is due

      // (a) the batch closing → its file built, validated, stored and uploaded
      const out = await measure(`file-out-${kind}`, watched, () => fileOut(PAYOUTS));
      const { msgId } = out.value;
      await bankTook(bank, msgId, PAYOUTS);
      const stored = await platform.services.db.query<{ size: number }>(
        'SELECT length(bytes) AS size FROM sepa_files WHERE msg_id = $1',
        [msgId],
      );
      const bytes = Number(stored.rows[0]?.size ?? NaN);

      // (b) a status file of every payout → each SUCCEEDED with its event
      const xml =
        kind === 'pain.002'
          ? pain002Of(msgId, orderNos)
          : kind === 'camt.054'
            ? camt054Of(bank, msgId, orderNos)
            : kind === 'camt.053'
              ? camt053Of(bank, msgId, orderNos)
              : batchBookingOf(bank, msgId, orderNos.length);
      const statusName = `bench-${kind}-${msgId}.xml`;
      placeStatusFile(bank, statusName, xml);
      const statusIn = await measure(`status-in-${kind}`, watched, () => poll(1));
      const after = await settled(platform, orderNos);
      if (after.payouts !== PAYOUTS || after.events !== PAYOUTS) {
        throw new Error(`after the ${kind}: ${JSON.stringify(after)} of ${PAYOUTS}`);
      }
      // Where (b)'s time goes: the same file fetched again over the channel's SFTP session alone.
      const fetchedAt = performance.now();
      const fetched = await connector.sftp.use((ops) =>
        ops.read(`${connector.settings.downloadDir}/${statusName}`, 1024 * 1024 * 1024),
      );
      if (fetched.length !== Buffer.byteLength(xml)) throw new Error(`read ${fetched.length} bytes of ${statusName}`);
      const readSeconds = (performance.now() - fetchedAt) / 1000;
      files.push({ kind, out, bytes, in: statusIn, statusBytes: Buffer.byteLength(xml), readSeconds });
    }

    // The bank's own pain.002 and camt.054 for each file: read, recorded, nothing changes.
    await bankControl(bank, 'POST', '/booking', { mode: 'release' });
    for (const file of files) await bankAnswered(bank, file.out.value.msgId, 2);
    const again = await measure('bank-files', watched, () => poll(2 * files.length));
    const events = await platform.services.db.query<{ n: bigint }>(
      `SELECT count(*)::bigint AS n FROM events WHERE order_type = 'PAYOUT' AND status = 'SUCCEEDED'`,
    );
    if (Number(events.rows[0]?.n) !== total) {
      throw new Error(`after the bank's own files: ${String(events.rows[0]?.n)} SUCCEEDED events, not ${total}`);
    }
    return { load, files, again };
  } finally {
    await started?.platform.close();
    if (bank && bank.child.exitCode === null) {
      const exited = new Promise((resolve) => bank?.child.once('exit', resolve));
      bank.child.kill('SIGTERM');
      await exited;
    }
    await database?.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SEPA Instant: payouts confirmed one at a time on an `"instant": true` channel, the file steps running as the server runs them. */
const INSTANT_PAYOUTS = Number(process.env.BENCH_SEPA_INSTANT ?? 30);
/** The brief's word: an instant payout leaves within 2 seconds of its confirm. */
const TARGET_INSTANT_LEAVES_S = 2;
/** Between two confirms: some share a second (one file), most have one of their own. */
const INSTANT_SPACING_MS = 700;
/** The instant channel's pollEvery: how soon the bank's status file is read once written. */
const INSTANT_POLL = '1s';

interface InstantFigures {
  readonly load: number;
  /** Per payout: confirm → its file uploaded to the bank, and confirm → SUCCEEDED (seconds). */
  readonly leaves: number[];
  readonly succeeded: number[];
  readonly files: number;
}

/**
 * INSTANT_PAYOUTS EUR payouts confirmed INSTANT_SPACING_MS apart on a channel with `"instant": true`
 * to a `paygate-bank` of its own, with the channel's file steps running as the server runs them
 * (startSepaChannels: the batch step every 250 ms, the inbox every INSTANT_POLL): per payout, the
 * time from its confirm answered to its file uploaded (the platform's `uploaded_at`), and to the
 * payout SUCCEEDED from the bank's instant booking (its `finalized_at`).
 */
async function instantBenchmark(database: Awaited<ReturnType<typeof postgresUrl>>): Promise<InstantFigures> {
  const load = loadavg()[0] ?? NaN;
  const dir = mkdtempSync(join(tmpdir(), 'paygate-bench-sepa-instant-'));
  let bank: Bank | undefined;
  let started: Awaited<ReturnType<typeof startBenchPlatform>> | undefined;
  let stop: (() => Promise<void>) | undefined;
  try {
    bank = await startBank(dir);
    started = await startBenchPlatform(dir, bank, database?.url, {
      instant: true,
      batchEvery: `${BATCH_EVERY_MS}ms`,
      pollEvery: INSTANT_POLL,
    });
    const { platform } = started;
    const merchant = await createMerchant(platform, 'SEPA instant bench');
    const merchantId = await platform.services.merchants.idOf(merchant.accessKey);
    await fund(platform, merchant, ((INSTANT_PAYOUTS + 1) * 11 + 100).toFixed(2), 'EUR');
    stop = startSepaChannels(platform.services, stepOptions);
    const confirmedAt = new Map<string, number>();
    /** Creates and confirms payout `i`; its orderNo. */
    const confirmOne = async (i: number) => {
      const { payout } = await platform.services.payouts.create(merchantId, {
        merchantOrderNo: `INST-${i}`,
        currency: 'EUR',
        amount: AMOUNT,
        webhookUrl: 'https://shop.example/webhook/payout',
        payee: { name: NAMES[Math.abs(i) % NAMES.length], accountNumber: IBANS[Math.abs(i) % IBANS.length] },
      });
      await platform.services.payouts.confirm(merchantId, { orderNo: payout.orderNo });
      return payout.orderNo;
    };
    // A warm-up payout the whole way first (the SFTP session, the XSD, the JIT), not measured.
    const warm = await confirmOne(-1);
    const warmDeadline = Date.now() + 60_000;
    while ((await settled(platform, [warm])).payouts < 1) {
      if (Date.now() > warmDeadline) throw new Error('the warm-up instant payout not SUCCEEDED within a minute');
      await sleep(100);
    }
    for (let i = 0; i < INSTANT_PAYOUTS; i++) {
      const orderNo = await confirmOne(i);
      confirmedAt.set(orderNo, Date.now());
      await sleep(INSTANT_SPACING_MS);
    }
    const orderNos = [...confirmedAt.keys()];
    const deadline = Date.now() + 120_000;
    while ((await settled(platform, orderNos)).payouts < orderNos.length) {
      if (Date.now() > deadline) throw new Error('instant payouts not SUCCEEDED within 2 minutes');
      await sleep(100);
    }
    const rows = await platform.services.db.query<{
      order_no: string;
      uploaded_at: Date;
      finalized_at: Date;
      msg_id: string;
    }>(
      `SELECT p.order_no, f.uploaded_at, p.finalized_at, f.msg_id
         FROM payouts p JOIN sepa_file_payouts s ON s.order_no = p.order_no JOIN sepa_files f ON f.id = s.file_id
        WHERE p.order_no = ANY($1::text[])`,
      [orderNos],
    );
    if (rows.rows.length !== orderNos.length) throw new Error(`${rows.rows.length} instant payouts in files`);
    const of = (row: { order_no: string }, at: Date) => (at.getTime() - (confirmedAt.get(row.order_no) ?? NaN)) / 1000;
    return {
      load,
      leaves: rows.rows.map((row) => of(row, row.uploaded_at)),
      succeeded: rows.rows.map((row) => of(row, row.finalized_at)),
      files: new Set(rows.rows.map((row) => row.msg_id)).size,
    };
  } finally {
    await stop?.();
    await started?.platform.close();
    if (bank && bank.child.exitCode === null) {
      const exited = new Promise((resolve) => bank?.child.once('exit', resolve));
      bank.child.kill('SIGTERM');
      await exited;
    }
    await database?.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

function reportInstant(label: string, figures: InstantFigures): void {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[middle] ?? NaN)
      : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
  };
  const worst = (values: number[]) => Math.max(...values);
  const leavesWorst = worst(figures.leaves);
  console.log(
    `\nSEPA Instant, ${label}: ${figures.leaves.length} payouts confirmed ${INSTANT_SPACING_MS} ms apart in ${figures.files} files ` +
      `(file steps as the server runs them: batch every 250 ms, inbox every ${INSTANT_POLL}); load average at the start ${figures.load.toFixed(1)}`,
  );
  console.log(
    `instant: confirm → file uploaded to the bank: median ${median(figures.leaves).toFixed(2)} s, worst ${leavesWorst.toFixed(2)} s ` +
      `(target ≤ ${TARGET_INSTANT_LEAVES_S} s): ${leavesWorst <= TARGET_INSTANT_LEAVES_S ? 'PASS' : 'FAIL'}`,
  );
  console.log(
    `instant: confirm → SUCCEEDED (the bank's instant booking read): median ${median(figures.succeeded).toFixed(2)} s, ` +
      `worst ${worst(figures.succeeded).toFixed(2)} s (no target: the bank books within 1 s, read every ${INSTANT_POLL})`,
  );
}

function report(label: string, figures: Figures, database: 'postgres' | 'pglite'): void {
  const count = PAYOUTS.toLocaleString('en');
  const full = PAYOUTS === FULL;
  const verdict = (seconds: number, target: number) =>
    full ? (seconds <= target ? 'PASS' : 'FAIL') : `— (smoke run; the targets are for ${FULL.toLocaleString('en')})`;
  const memory = (m: Measured<unknown>) =>
    `RSS ${mib(m.rssBefore)} → peak ${mib(m.rssPeak)}${m.rssPeakOwn ? '' : ' (the process peak)'}, ` +
    `V8 heap ${mib(m.heapBefore)} → peak ${mib(m.heapPeak)}`;
  console.log(
    `\ndatabase: ${label}; paygate-bank in its own process; the platform in this one, workers off; ` +
      `load average at the start ${figures.load.toFixed(1)} on ${availableParallelism()} CPUs`,
  );
  console.log(
    '| step                                                       |      s | CPU s: platform |  bank | PostgreSQL | platform process memory |',
  );
  console.log(
    '|------------------------------------------------------------|--------|-----------------|-------|------------|-------------------------|',
  );
  const cpu = (value: number | undefined, width: number) =>
    (value === undefined ? '—' : value.toFixed(2)).padStart(width);
  const row = (name: string, m: Measured<unknown>) =>
    console.log(
      `| ${name.padEnd(58)} | ${m.seconds.toFixed(2).padStart(6)} | ${cpu(m.cpuSeconds, 15)} | ` +
        `${cpu(m.bankCpuSeconds, 5)} | ${cpu(m.databaseCpuSeconds, 10)} | ${memory(m)} |`,
    );
  for (const file of figures.files) {
    row(`(a) ${count} payouts → pain.001 (${size(file.bytes)}) uploaded`, file.out);
    const what =
      file.kind === 'pain.002'
        ? `pain.002 of ${count} ACSC`
        : file.kind === 'camt.054'
          ? `camt.054 of ${count} DBIT`
          : file.kind === 'camt.053'
            ? `camt.053 of ${count} DBIT entries`
            : `camt.053 batch booking of the file`;
    row(`(b) ${what} (${size(file.statusBytes)}) → SUCCEEDED`, file.in);
  }
  row(`bank's own pain.002 + camt.054 of each, again (no target)`, figures.again);
  for (const file of figures.files) {
    console.log(
      `of which: (a) built, validated and stored ${file.out.value.buildSeconds.toFixed(2)} s, uploaded ` +
        `${file.out.value.uploadSeconds.toFixed(2)} s; (b) the ${file.kind} alone read over SFTP again: ` +
        `${file.readSeconds.toFixed(2)} s`,
    );
  }
  for (const file of figures.files) {
    console.log(
      `file out: ${count} confirmed payouts → one file built, XSD-validated, stored and uploaded in ` +
        `${file.out.seconds.toFixed(2)} s (target ≤ ${TARGET_FILE_OUT_S} s): ${verdict(file.out.seconds, TARGET_FILE_OUT_S)}`,
    );
  }
  for (const file of figures.files) {
    const target =
      file.kind === 'camt.053'
        ? TARGET_STATEMENT_S[database]
        : file.kind === 'batch'
          ? TARGET_BATCH_S
          : TARGET_STATUS_IN_S;
    const what =
      file.kind === 'batch'
        ? `a batch booking (one camt.053 entry) of a ${count}-payout file`
        : `a ${file.kind} of ${count} ${file.kind === 'camt.053' ? 'entries' : 'transactions'}`;
    console.log(
      `status in: ${what} applied (every payout SUCCEEDED, its event written) in ` +
        `${file.in.seconds.toFixed(2)} s (target ≤ ${target} s): ${verdict(file.in.seconds, target)}`,
    );
  }
}

// Both databases, PostgreSQL first (when one answers), then the embedded default.
const only = process.env.BENCH_DATABASE;
if (only !== undefined && only !== 'postgres' && only !== 'pglite') {
  throw new Error(`BENCH_DATABASE is postgres or pglite, not ${only}`);
}
/** BENCH_SEPA_ONLY=files|instant: the file rows or the instant row only. */
const part = process.env.BENCH_SEPA_ONLY;
if (only !== 'pglite') {
  const database = await postgresUrl();
  if (!database) console.log('\nPostgreSQL: none answered; skipped');
  else {
    if (part !== 'instant') report('PostgreSQL', await benchmark(database), 'postgres');
    else await database.drop();
    const another = part === 'files' ? undefined : await postgresUrl();
    if (another) reportInstant('PostgreSQL', await instantBenchmark(another));
  }
}
if (only !== 'postgres') {
  if (part !== 'instant') report('PGlite (embedded, the default)', await benchmark(undefined), 'pglite');
  if (part !== 'files') reportInstant('PGlite (embedded, the default)', await instantBenchmark(undefined));
}
