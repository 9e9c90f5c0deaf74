/**
 * For the simulators' tests (`@paygate/simulator-kit/test-support`): a simulator's bin started as
 * its own process, as `npx paygate-…` starts it. Nothing a simulator runs imports this module; it
 * is built with the rest of the kit only so the tests can load it the way they load the kit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Calls `probe` every 25 ms until it gives a value other than undefined or false, and resolves
 * that value; rejects after `timeoutMs` naming `what`.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A simulator process that is listening. */
export interface SimulatorProcess<Listening> {
  readonly child: ChildProcess;
  /** What it printed so far: stdout line by line, stderr as it came. */
  readonly lines: string[];
  /** The fields of its JSON `"<name> listening"` log line (`url`, `controlUrl`, …). */
  readonly listening: Listening;
}

/**
 * Starts the simulator's bin (`bin/paygate-….js`) as its own process with `env` over this
 * process's environment (and no NODE_OPTIONS: the bin chooses how to load), and waits at most
 * `timeoutMs` for its `"<name> listening"` log line. A process that does not get there is killed
 * and the error shows what it printed.
 */
export async function startSimulator<Listening extends object = Record<string, unknown>>(
  bin: string,
  name: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<SimulatorProcess<Listening>> {
  const child = spawn(process.execPath, [bin], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr?.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  const listening = await waitFor(
    () => lines.find((line) => line.includes(`"msg":"${name} listening"`)),
    `${name} to listen`,
    timeoutMs,
  ).catch((error: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${error.message}: ${lines.join('\n')}`);
  });
  return { child, lines, listening: JSON.parse(listening) as Listening };
}

/** Sends `signal` (unless it has ended already) and resolves its exit code (null: ended by a signal). */
export async function stopSimulator(
  running: { readonly child: ChildProcess },
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<number | null> {
  const { child } = running;
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill(signal);
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}
