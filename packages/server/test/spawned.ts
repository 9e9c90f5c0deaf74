// The platform, its command line and the simulators as separate processes, as an operator runs
// them: for tests of what only a process shows (exit codes and the line on stderr, a SIGKILL, a
// second process on the same data directory) and for the end-to-end tests.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { boxPublicKeyFrom, generateSigningKey } from '@paygate/protocol';
import { type DatabaseKind, freshPostgres, type TestMerchant } from './harness.js';

const ROOT = join(import.meta.dirname, '../../..');
const SERVER = join(ROOT, 'packages/server/src/main.ts');
const CLI = join(ROOT, 'packages/server/src/cli/main.ts');
/** `npx paygate-psp`'s entry point, run from its sources. */
export const PSP_SIMULATOR = join(ROOT, 'packages/psp-simulator/src/main.ts');
/** `npx paygate-bank`'s entry point, run from its sources. */
export const BANK_SIMULATOR = join(ROOT, 'packages/bank-simulator/src/main.ts');
const TSX = ['--conditions=source', '--import', 'tsx'];

/**
 * Calls `probe` every 50 ms until it gives a value other than undefined or false, and resolves
 * that value; rejects after `timeoutMs` (default 40 s: an end-to-end step crosses processes)
 * naming `what`, followed by what `explain` says then (the state a failure is read from: what
 * the processes involved printed last, say).
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 40_000,
  explain?: () => Promise<string> | string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const detail = explain ? `\n${await explain()}` : '';
      throw new Error(`timed out waiting for ${what}${detail}`);
    }
    await sleep(50);
  }
}

/** The last `count` lines `spawned` printed, under a heading naming it: for a failure's message. */
export function lastLines(name: string, spawned: Spawned | undefined, count = 15): string {
  const lines = (spawned?.output() ?? '').trimEnd().split('\n').slice(-count);
  return `--- ${name}, its last ${lines.length} lines:\n${lines.join('\n')}`;
}

/** A process started from this repository's TypeScript sources: the platform, its command line, a simulator. */
export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves its exit code once it has exited (null: ended by a signal). */
  readonly exited: Promise<number | null>;
  /** What it printed so far, stdout and stderr together. */
  output(): string;
}

/** A platform process that is listening. */
export interface SpawnedPlatform extends Spawned {
  readonly url: string;
}

/**
 * Starts `script` (an entry point's `.ts` in this repository) with `args` as its own process,
 * through tsx with workspace packages resolved to their sources, with `env` over this process's
 * environment.
 */
export function spawnNode(
  script: string,
  env: Record<string, string>,
  args: readonly string[] = [],
  /** Node's own flags ahead of tsx's (a preload, say). */
  nodeFlags: readonly string[] = [],
): Spawned {
  const child = spawn(process.execPath, [...nodeFlags, ...TSX, script, ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Waits at most `timeoutMs` for `pattern` in what `proc` printed and returns the match. A process
 * that exits first or does not print it in time is killed, and the error shows the end of its
 * output.
 */
export async function waitForLine(proc: Spawned, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(proc.output());
    if (match) return match;
    if (proc.child.exitCode !== null || Date.now() > deadline) {
      proc.child.kill('SIGKILL');
      throw new Error(`no ${pattern} from the process:\n${proc.output().slice(-4000)}`);
    }
    await sleep(50);
  }
}

/**
 * Starts `npm start`'s entry point as its own process with `env` and waits (at most
 * `startTimeoutMs`, default 60 s) for it to listen.
 */
export async function spawnPlatform(
  env: Record<string, string>,
  startTimeoutMs = 60_000,
  /** Node's own flags ahead of tsx's (a preload, say). */
  nodeFlags: readonly string[] = [],
): Promise<SpawnedPlatform> {
  const proc = spawnNode(SERVER, env, [], nodeFlags);
  const match = await waitForLine(proc, /"url":"(http:\/\/[^"]+)".*"msg":"paygate listening"/, startTimeoutMs);
  return { ...proc, url: match[1] as string };
}

/** Sends `signal` to a process still running and waits for it to be gone (nothing for undefined). */
export async function stopSpawned(running: Spawned | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!running) return;
  if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill(signal);
  await running.exited;
}

/**
 * Where a production platform process keeps its data on `database`: a fresh PostgreSQL database
 * (`DATABASE_URL`; `drop` removes it), or the embedded database in `<dir>/platform`
 * (`PAYGATE_DATA_DIR`, allowed in production by PAYGATE_EMBEDDED_PRODUCTION).
 */
export async function productionStorage(
  database: DatabaseKind,
  dir: string,
): Promise<{ readonly env: Record<string, string>; readonly drop: (() => Promise<void>) | undefined }> {
  if (database === 'postgres') {
    const db = await freshPostgres();
    return { env: { DATABASE_URL: db.url }, drop: db.drop };
  }
  const dataDir = join(dir, 'platform');
  mkdirSync(dataDir, { recursive: true });
  return { env: { PAYGATE_DATA_DIR: dataDir, PAYGATE_EMBEDDED_PRODUCTION: 'true' }, drop: undefined };
}

/** What a process that ran to its end said and how it ended. */
export interface Finished {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the platform's entry point to its end (one that is expected to refuse to start). */
export function runPlatform(env: Record<string, string>): Finished {
  return finished(spawnSync(process.execPath, [...TSX, SERVER], runOptions(env)));
}

/** Runs `npx paygate …` to its end (killed after `timeoutMs`). */
export function runCli(args: readonly string[], env: Record<string, string>, timeoutMs = 60_000): Finished {
  return finished(spawnSync(process.execPath, [...TSX, CLI, ...args], runOptions(env, timeoutMs)));
}

/** Runs `npx paygate …` to its end without blocking this process (its event loop goes on). */
export function runCliAsync(args: readonly string[], env: Record<string, string>): Promise<Finished> {
  const child = spawn(process.execPath, [...TSX, CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

function runOptions(env: Record<string, string>, timeoutMs = 60_000) {
  return {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    encoding: 'utf8' as const,
    timeout: timeoutMs,
  };
}

function finished(result: { status: number | null; stdout: string; stderr: string }): Finished {
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Onboards a merchant through the operator API of a running platform. */
export async function onboard(url: string, adminToken: string, name = 'Spawned shop'): Promise<TestMerchant> {
  const key = generateSigningKey();
  const response = await fetch(`${url}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, publicKey: key.publicKey.toString('base64') }),
  });
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as {
    data: { accessKey: string; bodyKey: { keyId: string; publicKey: string } };
  };
  const bodyKey = boxPublicKeyFrom(data.bodyKey.publicKey);
  if (!bodyKey.ok) throw new Error('bad body key');
  return {
    accessKey: data.accessKey,
    key,
    bodyKey: { keyId: data.bodyKey.keyId, publicKey: bodyKey.value },
    webhookKeys: [],
  };
}
