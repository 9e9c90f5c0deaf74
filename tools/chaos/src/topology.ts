/**
 * Everything the campaign runs, as real processes on 127.0.0.1 on ports probed free: its own
 * PostgreSQL, the simulators (`paygate-psp`, `paygate-pix`, `paygate-bank`) each behind a fault
 * proxy, and the deploy/ recipe (HAProxy, two API instances, two `paygate worker` processes,
 * deploy/cluster.mjs) configured with the three channels.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FaultProxy, startFaultProxy } from '@paygate/simulator-kit/fault-proxy';
import { type SimulatorProcess, startSimulator, stopSimulator } from '@paygate/simulator-kit/test-support';
import { type Cluster, freePort, startCluster } from '../../../deploy/cluster.mjs';
import { type OwnPostgres, startOwnPostgres } from './postgres.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
export const PSP_SECRET = 'chaos-psp-secret-0123456789abcdef0123';

/** What the campaign may tune (timings short enough that a few minutes show whole lives). */
export interface TopologyOptions {
  readonly dir: string;
  /** Webhook retry delays: long enough in all to outlast the longest receiver fault. */
  readonly retrySchedule: string;
  /** How long a PENDING payment waits for its payer. */
  readonly paymentExpiry: string;
  readonly log: (line: string) => void;
}

/** The simulators running now: none outlives the campaign, however it ends. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A simulator the campaign can kill and start again on the same ports and data directory. */
export class Simulator {
  private running: SimulatorProcess<Record<string, unknown>> | undefined;
  readonly exits: { code: number | null; signal: string | null; expected: boolean }[] = [];
  private expectExit = false;

  constructor(
    readonly name: 'psp' | 'pix' | 'bank',
    private readonly bin: string,
    private readonly program: string,
    private readonly env: Record<string, string>,
    /** The platform reaches it through this proxy. */
    readonly proxy: FaultProxy,
    /** Its plain-HTTP test controls. */
    readonly controlUrl: string,
  ) {}

  get alive(): boolean {
    const child = this.running?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  async start(): Promise<void> {
    const running = await startSimulator(this.bin, this.program, this.env, 60_000);
    live.add(running.child);
    running.child.once('exit', () => live.delete(running.child));
    this.expectExit = false;
    running.child.once('exit', (code, signal) => {
      this.exits.push({ code, signal, expected: this.expectExit });
    });
    this.running = running;
  }

  /** Sends `signal` (a fault: the exit is expected) and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running || !this.alive) return;
    this.expectExit = true;
    await stopSimulator(this.running, signal);
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
  }

  output(): string {
    return (this.running?.lines ?? []).slice(-20).join('\n');
  }
}

export interface Topology {
  readonly postgres: OwnPostgres;
  readonly cluster: Cluster;
  readonly simulators: { readonly psp: Simulator; readonly pix: Simulator; readonly bank: Simulator };
  /** The pix channel's settings as the platform has them (for querying charges as the platform does). */
  readonly pixChannel: PixChannel;
  readonly pspUrl: string;
  readonly logDir: string;
  stop(): Promise<void>;
}

export interface PixChannel {
  readonly baseUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** The bin of a simulator package (its build, or its sources through tsx: simulator-kit's launch). */
const bin = (pkg: string, name: string) => join(ROOT, 'packages', pkg, 'bin', `${name}.js`);

export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const { dir, log } = options;
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  try {
    log('PostgreSQL: initdb into a temporary directory');
    const postgres = await startOwnPostgres(join(dir, 'pg'), await freePort());
    stops.push(() => postgres.stop());
    log(`PostgreSQL on 127.0.0.1:${postgres.port}`);

    // paygate-psp: its API behind a proxy; its notifications go to HAProxy (PAYGATE_PUBLIC_URL).
    const pspPort = await freePort();
    const pspProxy = await startFaultProxy({ target: { port: pspPort } });
    const psp = new Simulator(
      'psp',
      bin('psp-simulator', 'paygate-psp'),
      'paygate-psp',
      {
        HOST: '127.0.0.1',
        PSP_PORT: String(pspPort),
        PSP_SECRET,
        PSP_DATA_DIR: join(dir, 'psp'),
        PSP_TICK_MS: '100',
        PSP_RETRY_BASE_MS: '500',
        PSP_RETRY_MAX_MS: '5000',
        // The kit waits for the "listening" line, logged at info.
        LOG_LEVEL: 'info',
      },
      pspProxy,
      `http://127.0.0.1:${pspPort}`,
    );
    stops.push(async () => {
      await psp.stop();
      await pspProxy.close();
    });

    // paygate-pix: HTTPS API behind a proxy (TLS passes through it), controls on their own port.
    const pixPort = await freePort();
    const pixControlPort = await freePort();
    const pixProxy = await startFaultProxy({ target: { port: pixPort } });
    const pixDir = join(dir, 'pix');
    const pix = new Simulator(
      'pix',
      bin('pix-simulator', 'paygate-pix'),
      'paygate-pix',
      {
        HOST: '127.0.0.1',
        PIX_PORT: String(pixPort),
        PIX_CONTROL_PORT: String(pixControlPort),
        PIX_DATA_DIR: pixDir,
        PIX_TICK_MS: '100',
        PIX_RETRY_BASE_MS: '500',
        PIX_RETRY_MAX_MS: '5000',
        // The kit waits for the "listening" line, logged at info.
        LOG_LEVEL: 'info',
      },
      pixProxy,
      `http://127.0.0.1:${pixControlPort}`,
    );
    stops.push(async () => {
      await pix.stop();
      await pixProxy.close();
    });

    // paygate-bank: SFTP behind a proxy (SSH passes through it), controls on their own port.
    const keyFile = join(dir, 'bank_ed25519');
    const keygen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile], { encoding: 'utf8' });
    if (keygen.status !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr || keygen.error?.message}`);
    const sftpPort = await freePort();
    const bankControlPort = await freePort();
    const bankProxy = await startFaultProxy({ target: { port: sftpPort } });
    const bankDir = join(dir, 'bank');
    const bank = new Simulator(
      'bank',
      bin('bank-simulator', 'paygate-bank'),
      'paygate-bank',
      {
        HOST: '127.0.0.1',
        BANK_SFTP_PORT: String(sftpPort),
        BANK_PORT: String(bankControlPort),
        BANK_DATA_DIR: bankDir,
        BANK_AUTHORIZED_KEY: `${keyFile}.pub`,
        BANK_BOOK_AFTER: '2s',
        BANK_BATCH_EVERY: '3s',
        BANK_POLL_EVERY: '1s',
        BANK_TICK_MS: '200',
        // As many banks do: a camt.054 per booking and the day's camt.053 repeating them (a short
        // day, so the statements come during the campaign), and pain.002's intermediate codes.
        BANK_REPORTS: 'both',
        BANK_STATUS_REPORTS: 'intermediate',
        BANK_DAY: '20s',
        // The kit waits for the "listening" line, logged at info.
        LOG_LEVEL: 'info',
      },
      bankProxy,
      `http://127.0.0.1:${bankControlPort}`,
    );
    stops.push(async () => {
      await bank.stop();
      await bankProxy.close();
    });

    log('simulators: paygate-psp, paygate-pix, paygate-bank');
    await Promise.all([psp.start(), pix.start(), bank.start()]);

    const pixSnippet = JSON.parse(readFileSync(join(pixDir, 'channel.json'), 'utf8')) as Record<string, unknown> &
      PixChannel;
    const viaProxy = (url: string, port: number) => {
      const parsed = new URL(url);
      parsed.port = String(port);
      return parsed.toString().replace(/\/$/, '');
    };
    const pixChannel: PixChannel = {
      ...pixSnippet,
      baseUrl: viaProxy(pixSnippet.baseUrl, pixProxy.port),
      tokenUrl: viaProxy(pixSnippet.tokenUrl, pixProxy.port),
    };
    const bankSnippet = JSON.parse(readFileSync(join(bankDir, 'channel.json'), 'utf8')) as Record<string, unknown>;
    const channels = {
      channels: [
        { ...pixSnippet, ...pixChannel, name: 'pix', timeoutMs: 3_000 },
        {
          name: 'psp',
          kind: 'psp-sim',
          methods: [
            { currency: 'MXN', code: 'SPEI' },
            { currency: 'BRL', code: 'BOLETO' },
          ],
          payouts: ['MXN'],
          baseUrl: `http://127.0.0.1:${pspProxy.port}`,
          secret: PSP_SECRET,
          timeoutMs: 3_000,
        },
        {
          ...bankSnippet,
          name: 'bank',
          // EUR payments by bank transfer to the same account (the payer's credit settles them).
          methods: [{ currency: 'EUR', code: 'SEPA' }],
          port: bankProxy.port,
          privateKeyFile: keyFile,
          batchEvery: '3s',
          pollEvery: '1s',
          timeoutMs: 3_000,
        },
      ],
    };
    const channelsFile = join(dir, 'channels.json');
    writeFileSync(channelsFile, `${JSON.stringify(channels, null, 2)}\n`);

    log('the deploy/ recipe: paygate migrate, two API instances, two workers, HAProxy');
    const cluster = await startCluster({
      databaseUrl: postgres.url,
      port: 0,
      source: true,
      logDir,
      env: {
        PAYGATE_CHANNELS: channelsFile,
        PAYGATE_RATE_LIMIT: '0',
        PAYGATE_SHUTDOWN_DRAIN: '1s',
        PAYGATE_SHUTDOWN_TIMEOUT: '10s',
        PAYGATE_WEBHOOK_RETRY_SCHEDULE: options.retrySchedule,
        PAYGATE_WEBHOOK_ALLOW_PRIVATE: 'true',
        PAYGATE_DATABASE_POOL: '8',
        PAYGATE_CHANNEL_POLL_AFTER: '8s',
        PAYGATE_PAYMENT_EXPIRY: options.paymentExpiry,
        LOG_LEVEL: 'warn',
      },
    });
    stops.push(() => cluster.stop());
    log(`platform at ${cluster.url} (logs ${logDir})`);
    return {
      postgres,
      cluster,
      simulators: { psp, pix, bank },
      pixChannel,
      pspUrl: `http://127.0.0.1:${pspPort}`,
      logDir,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
