/**
 * `paygate-pix` (packages/pix-simulator, its sources through tsx) as its own process for the
 * platform's tests of kind pix-api: free ports, a fresh data directory, tokens living 2 s.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../../..');
const SIMULATOR = join(ROOT, 'packages/pix-simulator/src/main.ts');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string | (() => string),
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(50);
  }
}

export interface Simulator {
  readonly child: ChildProcess;
  readonly controlUrl: string;
  readonly channel: Record<string, unknown>;
  readonly dir: string;
  /** The simulator's certificates and keys (ca.pem, server.pem, callback.pem, …). */
  readonly tlsDir: string;
}

/** `paygate-pix` as its own process on free ports; its channels-file entry from its control API. */
/** Starts the simulator; `env` overrides its settings (PIX_TICK_MS, PIX_TOKEN_TTL, …). */
export async function startSimulator(env: Record<string, string> = {}): Promise<Simulator> {
  const dir = mkdtempSync(join(tmpdir(), 'paygate-pix-e2e-'));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', SIMULATOR], {
    cwd: ROOT,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PIX_PORT: '0',
      PIX_CONTROL_PORT: '0',
      PIX_DATA_DIR: join(dir, 'pix'),
      PIX_TOKEN_TTL: '2',
      PIX_TICK_MS: '25',
      PIX_RETRY_BASE_MS: '100',
      PIX_RETRY_MAX_MS: '400',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const controlUrl = await waitFor(
    () => /"controlUrl":"(http:\/\/[^"]+)"/.exec(output)?.[1],
    () => `paygate-pix listening (output: ${output})`,
    60_000,
  );
  const channel = (await (await fetch(`${controlUrl}/control/channel`)).json()) as Record<string, unknown>;
  return { child, controlUrl, channel, dir, tlsDir: join(dir, 'pix', 'tls') };
}

export async function control(sim: Simulator, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${sim.controlUrl}/control/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  assert.equal(response.status, 200, `${path}: ${JSON.stringify(json)}`);
  return json;
}

/** Stops the simulator and waits for its exit. */
export async function stopSimulator(sim: Simulator): Promise<void> {
  if (sim.child.exitCode !== null) return;
  const exited = new Promise((resolve) => sim.child.once('exit', resolve));
  sim.child.kill('SIGTERM');
  await exited;
}
