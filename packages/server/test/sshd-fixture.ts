/**
 * Debian's OpenSSH server (`openssh-server`) as a bank's SFTP server, for the sepa-sftp tests:
 * `sshd` started on a free loopback port with a host key, a configuration and an authorized keys
 * file of the test's own, and OpenSSH's own `sftp-server` — the SFTP most banks run, with its
 * real rename and permission rules. Public-key authentication only. `startSepaSshd` starts one
 * with a channels file naming a sepa-sftp channel on it, the set-up the sepa-sftp suites share;
 * `sendBankFile` and its `notifies` play the two sides of a file sent and answered.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { type CamtEntry, writeCamt054 } from '@paygate/iso20022';
import { batchOnce, type FileLog, uploadOnce } from '../src/modules/channels/sepa-sftp/outbox.js';
import { isSepaSftp, type SepaSftpConnector } from '../src/modules/channels/sepa-sftp/sepa-sftp.js';
import type { Payout } from '@paygate/wire';
import { post, type TestMerchant, type TestPlatform } from './harness.js';

export const SSHD = '/usr/sbin/sshd';
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

/** Without Debian's openssh-server the sshd suites are skipped here, and fail in CI (which must have it). */
export const sshdMissing =
  !existsSync(SSHD) && !process.env.CI && `${SSHD} is not installed (apt-get install openssh-server)`;

/** The platform's own account at the bank: the debtor of the payout files the sepa-sftp suites send. */
export const DEBTOR = { name: 'Paygate Payouts SA', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

/**
 * A key pair in OpenSSH format, and the public key's fingerprint as `ssh-keygen -lf` prints it.
 * ssh2's generator makes about one ed25519 pair in 256 that its own parser refuses
 * (mscdex/ssh2#1513): such a pair is made again.
 */
export function sshKeyPair(): { privateKey: string; publicKey: string; fingerprint: string } {
  for (;;) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519');
    const parsed = ssh2.utils.parseKey(pair.public);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!key || key instanceof Error || ssh2.utils.parseKey(pair.private) instanceof Error) continue;
    const fingerprint = `SHA256:${createHash('sha256').update(key.getPublicSSH()).digest('base64').replace(/=+$/, '')}`;
    return { privateKey: pair.private, publicKey: pair.public, fingerprint };
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Sshd {
  readonly port: number;
  readonly username: string;
  readonly hostKey: string;
  /** The platform's private key file (its public key is the one authorized). */
  readonly clientKeyFile: string;
  readonly uploadDir: string;
  readonly downloadDir: string;
  readonly dir: string;
  /** Starts the server (again, on the same port and host key). */
  start(): Promise<void>;
  /** Stops it (the platform's connection drops). */
  stop(): Promise<void>;
  /** Stops it and removes its files. */
  close(): Promise<void>;
  output(): string;
}

/** An sshd of the test's own, started. */
export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-sshd-'));
  chmodSync(dir, 0o755);
  const host = sshKeyPair();
  const client = sshKeyPair();
  const hostKeyFile = join(dir, 'host_ed25519');
  writeFileSync(hostKeyFile, host.privateKey, { mode: 0o600 });
  const clientKeyFile = join(dir, 'client_ed25519');
  writeFileSync(clientKeyFile, client.privateKey, { mode: 0o600 });
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, `${client.publicKey}\n`, { mode: 0o600 });
  const uploadDir = join(dir, 'upload');
  const downloadDir = join(dir, 'download');
  mkdirSync(uploadDir);
  mkdirSync(downloadDir);
  const port = await freePort();
  const username = userInfo().username;
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKeyFile}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${authorized}`,
      'StrictModes no',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'LogLevel VERBOSE',
      `Subsystem sftp ${SFTP_SERVER}`,
      '',
    ].join('\n'),
  );
  // sshd's privilege separation directory, which Debian's service unit makes at boot.
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  let child: ChildProcess | undefined;
  let output = '';
  const start = async () => {
    output = '';
    const proc = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!/Server listening on/.test(output)) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`sshd did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  /** The processes sshd forked for its connections (their parent is the listener). */
  const sessions = (pid: number): number[] =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .flatMap((entry) => {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === pid ? [Number(entry)] : [];
        } catch {
          return [];
        }
      });
  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    // Down means down: the connections it serves end too, not only the listener.
    for (const pid of proc.pid === undefined ? [] : sessions(proc.pid)) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // gone already
      }
    }
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    port,
    username,
    hostKey: host.fingerprint,
    clientKeyFile,
    uploadDir,
    downloadDir,
    dir,
    start,
    stop,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    output: () => output,
  };
}

/** What a suite says of its sepa-sftp channel: its name and methods, and any setting of its own. */
export interface SepaChannel {
  readonly name: string;
  readonly methods: readonly { readonly currency: string; readonly code: string }[];
  readonly [setting: string]: unknown;
}

/** A batch of BANK_CHANNEL closes after ten minutes: by the cases moving the clock, never by real time. */
export const BANK_BATCH_MS = 600_000;

/**
 * The channel the sepa-sftp suites pay out through: `bank`, payouts only, a batch every
 * BANK_BATCH_MS, its inbox read every second, and every file for the next business day (cut-off
 * 00:00), so that a file's date is never the day it was built.
 */
export const BANK_CHANNEL: SepaChannel = {
  name: 'bank',
  methods: [],
  batchEvery: `${BANK_BATCH_MS}ms`,
  pollEvery: '1s',
  cutOff: '00:00',
};

export interface SepaSshd extends Sshd {
  /** The platform's environment naming the channels file with the one sepa-sftp channel on this server. */
  readonly env: { readonly PAYGATE_CHANNELS: string };
  /** That channel's connector in the platform. */
  connector(platform: TestPlatform): SepaSftpConnector;
  /** The bank puts a camt.054 notification of `entries` on DEBTOR's account into the download directory. */
  notifies(file: string, msgId: string, entries: readonly CamtEntry[]): void;
}

/**
 * An sshd of the test's own, started, and a channels file naming one sepa-sftp channel on it,
 * BANK_CHANNEL unless the suite gives its own: the connection (port, user, keys, directories) is
 * this server's; the channel pays out EUR from DEBTOR with a 3 s timeout unless `channel` says
 * otherwise.
 */
export async function startSepaSshd(channel: SepaChannel = BANK_CHANNEL): Promise<SepaSshd> {
  const sshd = await startSshd();
  const channelsFile = join(sshd.dir, 'channels.json');
  const connection = {
    host: '127.0.0.1',
    port: sshd.port,
    username: sshd.username,
    privateKeyFile: sshd.clientKeyFile,
    hostKey: sshd.hostKey,
    uploadDir: sshd.uploadDir,
    downloadDir: sshd.downloadDir,
  };
  const defaults = { payouts: ['EUR'], debtor: DEBTOR, timeoutMs: 3_000 };
  writeFileSync(
    channelsFile,
    JSON.stringify({ channels: [{ kind: 'sepa-sftp', ...connection, ...defaults, ...channel }] }),
  );
  return {
    ...sshd,
    env: { PAYGATE_CHANNELS: channelsFile },
    connector(platform) {
      const found = platform.services.channels.get(channel.name);
      assert.ok(found && isSepaSftp(found));
      return found;
    },
    notifies(file, msgId, entries) {
      const account = { name: DEBTOR.name, iban: DEBTOR.iban };
      writeFileSync(join(sshd.downloadDir, file), writeCamt054({ msgId, createdAt: new Date(), account, entries }));
    },
  };
}

/**
 * Sends the payouts confirmed so far to the bank: the clock moves past BANK_BATCH_MS, the batch's
 * file is built and uploaded to the sshd. The file's MsgId.
 */
export async function sendBankFile(
  platform: TestPlatform,
  connector: SepaSftpConnector,
  log: FileLog,
): Promise<string> {
  platform.advance(BANK_BATCH_MS);
  const batch = await batchOnce(platform.services, connector, { log });
  assert.equal(batch.kind, 'built');
  assert.deepEqual((await uploadOnce(platform.services, connector, { log })).failed, []);
  return batch.kind === 'built' ? batch.msgId : '';
}

/** A camt.054 entry: the bank returned the payout `orderNo` (AC04, the account is closed), its return `reference`. */
export function payoutReturned(orderNo: string, amount: string, reference: string): CamtEntry {
  return {
    status: 'BOOK',
    creditDebit: 'CRDT',
    amount,
    currency: 'EUR',
    bankTransactionCode: { domain: 'PMNT', family: 'ICDT', subFamily: 'RRTN' },
    transactions: [{ endToEndId: orderNo, accountServicerRef: reference, amount, returnReason: 'AC04' }],
  };
}

/**
 * A EUR payout of `amount` that `merchant` creates and confirms through the merchant API, to Ana
 * Souza (`payee` gives the account and anything else): it waits for the channel's next file.
 */
export async function confirmSepaPayout(
  platform: TestPlatform,
  merchant: TestMerchant,
  amount: string,
  payee: Record<string, unknown>,
): Promise<Payout> {
  const created = await post<Payout>(platform, merchant, '/api/v1/payouts', {
    merchantOrderNo: `S-${Math.random().toString(36).slice(2)}`,
    currency: 'EUR',
    amount,
    webhookUrl: 'https://shop.example/webhook',
    payee: { name: 'Ana Souza', ...payee },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const orderNo = created.body.data?.orderNo as string;
  const confirmed = await post<Payout>(platform, merchant, '/api/v1/payouts/confirm', { orderNo });
  assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
  return confirmed.body.data as Payout;
}
