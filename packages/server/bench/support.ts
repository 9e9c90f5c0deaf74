// Bench helpers: a throwaway PostgreSQL database and child processes that say when they are ready.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';

export const ROOT = new URL('../../../', import.meta.url).pathname;

/** A fresh database on TEST_DATABASE_URL's server (or the local default); undefined if none answers. */
export async function postgresUrl(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const base = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `paygate_bench_${randomBytes(4).toString('hex')}`;
  try {
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
  } catch {
    return undefined;
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/**
 * Starts a TypeScript file under the repository root as a child process (node flags in
 * `execArgv`, an IPC channel when `ipc`) and resolves with the first stdout line that `ready` accepts.
 */
export function startChild(
  script: string,
  env: Record<string, string>,
  ready: (line: string) => boolean = (line) => line.startsWith('{'),
  execArgv: readonly string[] = [],
  ipc = false,
): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, [...execArgv, '--conditions=source', '--import', 'tsx', join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? (['ipc'] as const) : [])],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find(ready);
      if (line) {
        child.stdout?.off('data', onData);
        // BENCH_CHILD_STDOUT=1: what the child prints after its ready line (say --trace-gc's lines) to stderr.
        if (process.env.BENCH_CHILD_STDOUT) child.stdout?.pipe(process.stderr);
        else child.stdout?.resume();
        resolve({ child, line });
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

/** The `url` a child printed as its first JSON line. */
export const urlOf = (line: string) => (JSON.parse(line) as { url: string }).url;
