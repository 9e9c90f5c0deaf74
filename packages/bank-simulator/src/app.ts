import { join } from 'node:path';
import {
  controlInput,
  createControlPort,
  listenOn,
  lockDirectory,
  urlHost,
  writeFileAtomic,
  type ControlPort,
} from '@paygate/simulator-kit';
import { pino, type Logger } from 'pino';
import type { Connection } from 'ssh2';
import { z } from 'zod';
import { Bank, BankError, bankPaths } from './bank.js';
import type { BankConfig } from './config.js';
import { ensureHostKey, loadAuthorizedKey, type AuthorizedKey, type HostKey } from './keys.js';
import { BOOKING_MODES, REPORTS, STATUS_REPORTS } from './model.js';
import { createSftpServer } from './sftp.js';
import { Store } from './store.js';

/** The `sepa-sftp` channel settings (decisions.md, "SEPA payouts: ISO 20022 files with a bank") that use this bank. */
export interface ChannelSettings {
  readonly name: string;
  readonly kind: 'sepa-sftp';
  readonly methods: readonly never[];
  readonly payouts: readonly ['EUR'];
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly privateKeyFile: string;
  readonly hostKey: string;
  readonly uploadDir: string;
  readonly downloadDir: string;
  readonly debtor: { readonly name: string; readonly iban: string; readonly bic: string };
  readonly batchEvery: string;
  readonly pollEvery: string;
}

export interface BankSimulator {
  readonly config: BankConfig;
  readonly bank: Bank;
  readonly store: Store;
  readonly log: Logger;
  readonly hostKey: HostKey;
  readonly authorizedKey: AuthorizedKey;
  /** The SFTP port once listening. */
  readonly sftpPort: number;
  /** `http://HOST:PORT` of the test controls, once listening. */
  readonly controlUrl: string;
  /** The channels-file entry for the platform. */
  channel(): ChannelSettings;
  listen(): Promise<void>;
  /** One pass of the background loop: take uploads, book what is due, write status files. */
  step(): Promise<void>;
  close(): Promise<void>;
}

export interface BankDeps {
  readonly log?: Logger;
  readonly clock?: () => number;
}

const endToEndId = z.string().min(1).max(35);
const reason = z.string().regex(/^[A-Z0-9]{4}$/, 'a 4-character ISO reason code such as AC01');
const rejectBody = z.strictObject({ endToEndId, reason });
const returnBody = z.strictObject({
  endToEndId,
  reason,
  amount: z
    .string()
    .regex(/^[0-9]{1,13}(\.[0-9]{1,2})?$/, 'a EUR amount such as "12.30"')
    .optional(),
});
const bookingBody = z.strictObject({ mode: z.enum(BOOKING_MODES) });
const customerBody = z.strictObject({
  reports: z.enum(REPORTS).optional(),
  batchBooking: z.boolean().optional(),
  statusReports: z.enum(STATUS_REPORTS).optional(),
});
const instantBody = z.strictObject({ mode: z.enum(['execute', 'reject']), reason: reason.optional() });
const creditBody = z.strictObject({
  amount: z.string().regex(/^[0-9]{1,13}(\.[0-9]{1,2})?$/, 'a EUR amount such as "12.30"'),
  reference: z.string().min(1).max(60).optional(),
  text: z.string().min(1).max(140).optional(),
  debtor: z.strictObject({ name: z.string().min(1).max(140), iban: z.string().min(1).max(60) }),
});
const duplicateBody = z.strictObject({ name: z.string().min(1).max(255) });

/**
 * The bank as a factory: checks the authorized key, takes the data directory's lock (a second
 * bank on it fails here, before touching anything), makes or loads its host key and its state.
 * `listen()` opens the SFTP port and the control port and starts the loop; `main.ts` only parses
 * config, listens and handles signals.
 */
export function createBank(config: BankConfig, deps: BankDeps = {}): BankSimulator {
  const clock = deps.clock ?? Date.now;
  const log = deps.log ?? pino({ name: 'paygate-bank', level: config.logLevel });
  const authorizedKey = loadAuthorizedKey(config.authorizedKeyFile);
  const lock = lockDirectory(config.dataDir, 'paygate-bank');
  let store: Store;
  let hostKey: HostKey;
  let bank: Bank;
  try {
    hostKey = ensureHostKey(config.dataDir);
    store = new Store(config.dataDir);
    bank = new Bank(
      store,
      {
        dataDir: config.dataDir,
        paths: bankPaths(config.dataDir, config.username),
        account: config.account,
        bookAfterMs: config.bookAfterMs,
        customer: config.customer,
        dayMs: config.dayMs,
        openingBalanceCents: config.openingBalanceCents,
      },
      log,
      clock,
    );
    bank.flush(); // status files recorded before a crash but not yet in /download
  } catch (error) {
    lock.release();
    throw error;
  }

  // ---- the loop: one step at a time; an upload or a control asks for the next one at once

  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let running = false;
  let again = false;
  let closed = false;

  const step = async () => {
    await bank.takeUploads();
    bank.bookDue();
    if (store.mode === 'release') bank.releaseHeld();
    bank.closeDayIfDue();
  };
  const loop = () => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    running = true;
    again = false;
    inFlight = step()
      .catch((error: unknown) => log.error({ err: error }, 'background step failed'))
      .finally(() => {
        running = false;
        if (closed) return;
        if (again) setImmediate(loop);
        else timer = setTimeout(loop, config.tickMs);
      });
  };
  const kick = () => {
    if (closed) return;
    if (running) again = true;
    else setImmediate(loop);
  };

  // ---- the SFTP server

  const paths = bankPaths(config.dataDir, config.username);
  const connections = new Set<Connection>();
  const sftpServer = createSftpServer({
    hostKey: hostKey.privateKey,
    authorized: authorizedKey,
    username: config.username,
    root: paths.root,
    writing: bank.writing,
    uploaded: kick,
    idleTimeoutMs: config.idleTimeoutMs,
    log,
  });
  sftpServer.on('connection', (client: Connection) => {
    connections.add(client);
    client.on('close', () => connections.delete(client));
  });

  // ---- test controls

  const controls: ControlPort = createControlPort({
    log,
    refusal: (error) => (error instanceof BankError ? error : undefined),
    routes: {
      'GET /control/channel': () => simulator.channel(),
      'GET /control/transfers': () => ({ mode: store.mode, transfers: [...store.transfers.values()] }),
      'GET /control/files': () => ({
        mode: store.mode,
        uploads: [...store.uploads.values()],
        statusFiles: [...store.files.values()].map(({ xml: _xml, ...file }) => file),
      }),
      'POST /control/transfers/reject': ({ body }) => {
        const input = controlInput(rejectBody, body);
        bank.reject(input.endToEndId, input.reason);
      },
      'POST /control/transfers/return': ({ body }) => {
        const input = controlInput(returnBody, body);
        bank.returnTransfer(input.endToEndId, input.reason, input.amount);
      },
      'POST /control/booking': ({ body }) => {
        bank.setMode(controlInput(bookingBody, body).mode);
        kick();
      },
      'POST /control/files/duplicate': async ({ body }) => {
        await bank.duplicate(controlInput(duplicateBody, body).name);
      },
      'GET /control/customer': () => ({
        ...bank.customer,
        instant: store.instantMode,
        statement: store.statement ?? null,
      }),
      'POST /control/customer': ({ body }) => {
        const change = controlInput(customerBody, body);
        return { ok: true, customer: bank.setCustomer(change) };
      },
      'POST /control/instant': ({ body }) => {
        const input = controlInput(instantBody, body);
        bank.setInstant(input.reason === undefined ? { mode: input.mode } : { mode: input.mode, reason: input.reason });
      },
      'POST /control/credits': ({ body }) => {
        const input = controlInput(creditBody, body);
        const booked = bank.credit({
          amount: input.amount,
          debtor: input.debtor,
          ...(input.reference !== undefined ? { reference: input.reference } : {}),
          ...(input.text !== undefined ? { text: input.text } : {}),
        });
        return { ok: true, ...booked };
      },
      'POST /control/statements/send': () => ({ ok: true, file: bank.sendStatement() }),
      'GET /control/entries': () => ({ entries: [...store.entries.values()] }),
    },
  });

  // ---- lifecycle

  const hostPart = urlHost(config.host);
  let sftpPort = config.sftpPort;

  const simulator: BankSimulator = {
    config,
    bank,
    store,
    log,
    hostKey,
    authorizedKey,
    get sftpPort() {
      return sftpPort;
    },
    controlUrl: '',
    channel() {
      return {
        name: 'bank',
        kind: 'sepa-sftp',
        methods: [],
        payouts: ['EUR'],
        host: hostPart.replace(/^\[|\]$/g, ''),
        port: sftpPort,
        username: config.username,
        privateKeyFile: config.privateKeyFile ?? `<the private key file of ${config.authorizedKeyFile}>`,
        hostKey: hostKey.fingerprint,
        uploadDir: '/upload',
        downloadDir: '/download',
        debtor: { name: config.account.name, iban: config.account.iban, bic: config.account.bic },
        batchEvery: config.batchEvery,
        pollEvery: config.pollEvery,
      };
    },
    async listen() {
      sftpPort = await listenOn(sftpServer, config.sftpPort, config.host);
      (simulator as { controlUrl: string }).controlUrl = await controls.listen(config.controlPort, config.host);
      writeFileAtomic(join(config.dataDir, 'channel.json'), `${JSON.stringify(simulator.channel(), null, 2)}\n`);
      loop();
    },
    step,
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      for (const client of connections) client.end();
      await Promise.all([
        new Promise<void>((resolve) => (sftpServer.listening ? sftpServer.close(() => resolve()) : resolve())),
        controls.close(),
      ]);
      await inFlight;
      store.close();
      lock.release();
    },
  };
  return simulator;
}
