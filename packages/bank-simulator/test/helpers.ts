import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { type BankFile, readBankFile, validateXml, writePain001, type CreditTransfer } from '@paygate/iso20022';
import { startSimulator } from '@paygate/simulator-kit/test-support';
import ssh2, { type Client as SshClient, type SFTPWrapper } from 'ssh2';
import { fingerprintOf, generateSshKeyPair } from '../src/keys.js';

const { Client } = ssh2;

export const BIN = fileURLToPath(new URL('../bin/paygate-bank.js', import.meta.url));

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-bank-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh client key pair; the public key written as an OpenSSH `.pub` file. */
export function clientKey(dir: string, name = 'client'): { privateKey: string; publicFile: string } {
  const pair = generateSshKeyPair(name);
  const publicFile = join(dir, `${name}.pub`);
  writeFileSync(publicFile, `${pair.public}\n`);
  writeFileSync(join(dir, name), pair.private, { mode: 0o600 });
  return { privateKey: pair.private, publicFile };
}

import { waitFor } from '@paygate/simulator-kit/test-support';

export { waitFor };

export interface Running {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly sftpPort: number;
  readonly controlUrl: string;
  /** As printed: `SHA256:…`. */
  readonly fingerprint: string;
  readonly channel: Record<string, unknown>;
}

/** Starts `paygate-bank` as its own process (as `npx paygate-bank` does) and reads what it prints. */
export async function startBank(dataDir: string, authorizedKey: string, env: Record<string, string> = {}) {
  const { child, lines, listening } = await startSimulator<{ sftpPort: number; controlUrl: string }>(
    BIN,
    'paygate-bank',
    {
      BANK_DATA_DIR: dataDir,
      BANK_AUTHORIZED_KEY: authorizedKey,
      BANK_SFTP_PORT: '0',
      BANK_PORT: '0',
      BANK_TICK_MS: '50',
      BANK_BOOK_AFTER: '300ms',
      ...env,
    },
  );
  const fingerprint = /host key (SHA256:[A-Za-z0-9+/]{43}) /.exec(lines.join('\n'))?.[1] as string;
  const snippet = lines[
    lines.findIndex((line) => line.startsWith('paygate-bank: the sepa-sftp channel')) + 1
  ] as string;
  return {
    child,
    lines,
    sftpPort: listening.sftpPort,
    controlUrl: listening.controlUrl,
    fingerprint,
    channel: JSON.parse(snippet) as Record<string, unknown>,
  } satisfies Running;
}

/** An SFTP session as the platform opens one: host key pinned by fingerprint, public-key authentication. */
export interface Session {
  readonly client: SshClient;
  readonly sftp: SFTPWrapper;
  end(): void;
  readdir(path: string): Promise<string[]>;
  read(path: string): Promise<Buffer>;
  write(path: string, data: string | Buffer, flags?: 'w' | 'wx' | 'a'): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Writes under a temporary name, then renames to `name`: the platform's upload. */
  upload(name: string, data: string | Buffer): Promise<void>;
}

export function connect(
  port: number,
  options: { privateKey: string; fingerprint: string; username?: string; password?: string },
): Promise<Session> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    client.on('error', reject);
    client.on('ready', () => {
      client.setNoDelay(true); // as the server: no Nagle delay on each small request
      client.sftp((error, sftp) => {
        if (error) return reject(error);
        const call = <T>(run: (done: (error: Error | null | undefined, value?: T) => void) => void) =>
          new Promise<T>((ok, fail) => run((e, value) => (e ? fail(e) : ok(value as T))));
        const session: Session = {
          client,
          sftp,
          end: () => client.end(),
          readdir: async (path) =>
            (await call<{ filename: string }[]>((done) => sftp.readdir(path, done))).map((e) => e.filename).sort(),
          read: (path) => call<Buffer>((done) => sftp.readFile(path, done)),
          write: async (path, data, flags = 'w') => {
            const handle = await call<Buffer>((done) => sftp.open(path, flags, 0o640, done));
            const bytes = Buffer.from(data);
            await call((done) => sftp.write(handle, bytes, 0, bytes.length, 0, (e) => done(e)));
            await call((done) => sftp.close(handle, (e) => done(e)));
          },
          rename: (from, to) => call((done) => sftp.rename(from, to, (e) => done(e))),
          upload: async (name, data) => {
            await session.write(`/upload/${name}.part`, data);
            await session.rename(`/upload/${name}.part`, `/upload/${name}`);
          },
        };
        resolve(session);
      });
    });
    client.connect({
      host: '127.0.0.1',
      port,
      username: options.username ?? 'paygate',
      privateKey: options.privateKey,
      ...(options.password !== undefined ? { password: options.password } : {}),
      hostVerifier: (key: Buffer) => fingerprintOf(key) === options.fingerprint,
      readyTimeout: 20_000,
    });
  });
}

export async function control(base: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: response.status, body: (await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

let counter = 0;
/** A fresh identifier of the EPC reference rules. */
export const newId = (prefix: string) => `${prefix}${Date.now().toString(36).toUpperCase()}${++counter}`;

export const DEBTOR = { name: 'Paygate Payouts', iban: 'DE75512108001245126199', bic: 'PGBKDEF0XXX' };

export function transfer(endToEndId: string, amount = '10.00', name = 'Zoë Müller & Co'): CreditTransfer {
  return { endToEndId, amount, creditor: { name, iban: 'FR1420041010050500013M02606', bic: 'PSSTFRPPPAR' } };
}

/** A pain.001 written by `@paygate/iso20022`, as the platform writes one. */
export function pain001(
  msgId: string,
  transfers: readonly CreditTransfer[],
  options: { instant?: boolean; batchBooking?: boolean } = {},
): string {
  return writePain001({
    ...options,
    msgId,
    createdAt: new Date(),
    requestedExecutionDate: new Date().toISOString().slice(0, 10),
    paymentInformationId: msgId,
    debtor: DEBTOR,
    transactions: transfers,
  });
}

/** The status files in `/download` not seen before, once there are `count` of them (in the order written). */
export async function nextFiles(session: Session, seen: Set<string>, count: number): Promise<BankFile[]> {
  const names = await waitFor(async () => {
    const fresh = (await session.readdir('/download')).filter((name) => !seen.has(name));
    return fresh.length >= count ? fresh : undefined;
  }, `${count} new status file(s)`);
  assert.equal(names.length, count, `exactly ${count} new file(s): ${names.join(', ')}`);
  const files: BankFile[] = [];
  for (const name of names) {
    seen.add(name);
    const bytes = await session.read(`/download/${name}`);
    const read = readBankFile(bytes);
    assert.ok(read.ok, `${name}: ${read.ok ? '' : read.reason}`);
    const schema =
      read.file.kind === 'pain.002'
        ? 'pain.002.001.10'
        : read.file.kind === 'camt.054'
          ? 'camt.054.001.08'
          : 'camt.053.001.08';
    assert.deepEqual(await validateXml(bytes, schema), { valid: true }, `${name} is valid against its XSD`);
    files.push(read.file);
  }
  return files;
}
