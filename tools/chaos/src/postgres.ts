/**
 * The campaign's own PostgreSQL: a cluster made with initdb in a temporary directory, on a port
 * of its own on 127.0.0.1, so that restarting it (fast or immediate shutdown) touches no one
 * else's database. Never the machine's shared server on 5432.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** PostgreSQL 15's programs as Debian installs them. */
export const PG_BIN = process.env.PAYGATE_CHAOS_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Root may not run PostgreSQL: the cluster then belongs to the `postgres` user. */
function databaseUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(program: string, args: string[], user: { uid: number; gid: number } | undefined): string {
  const result = spawnSync(join(PG_BIN, program), args, {
    encoding: 'utf8',
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    env: { ...process.env, LC_ALL: 'C' },
  });
  if (result.status !== 0) {
    throw new Error(`${program} ${args.join(' ')} failed: ${result.stderr || result.stdout || result.error?.message}`);
  }
  return result.stdout;
}

export interface OwnPostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/paygate */
  readonly url: string;
  readonly dataDir: string;
  /** Stops it with `mode` (immediate: a crash, recovered from the WAL at the next start). */
  shutdown(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again, waiting until it takes connections. */
  start(): Promise<void>;
  /** Ends every backend of the platform's database but the caller's; the count ended. */
  terminatePlatformBackends(): Promise<number>;
  stop(): Promise<void>;
}

/** Why the campaign cannot run here (its PostgreSQL, HAProxy), or false. */
export function campaignSkip(): string | false {
  if (spawnSync('haproxy', ['-v']).status !== 0) return 'HAProxy is not installed (apt-get install haproxy)';
  if (spawnSync(join(PG_BIN, 'postgres'), ['--version']).status !== 0) {
    return `PostgreSQL 15 is not installed at ${PG_BIN} (apt-get install postgresql-15)`;
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return 'run as root, the campaign needs the postgres user to own its cluster';
  }
  return false;
}

/** `run` without holding the event loop (the load and the probes go on meanwhile). */
function runAsync(program: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(PG_BIN, program), args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      env: { ...process.env, LC_ALL: 'C' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${program} ${args.join(' ')} failed (${code}): ${stderr}`)),
    );
  });
}

/** Makes a cluster under `dir` (created), starts it on `port`, and creates the database `paygate`. */
export async function startOwnPostgres(dir: string, port: number): Promise<OwnPostgres> {
  const user = databaseUser();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user) chownSync(dir, user.uid, user.gid);
  const dataDir = join(dir, 'data');
  run('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-instructions'], user);
  // Durable as a real server is (fsync on): an immediate shutdown is a crash, recovered from WAL.
  writeFileSync(
    join(dataDir, 'postgresql.auto.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'max_connections = 200',
      'shared_buffers = 64MB',
      'fsync = on',
      'synchronous_commit = on',
      "log_min_messages = 'warning'",
      '',
    ].join('\n'),
  );
  if (user) chownSync(join(dataDir, 'postgresql.auto.conf'), user.uid, user.gid);
  const logFile = join(dir, 'postgres.log');
  const startArgs = ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'];
  run('pg_ctl', startArgs, user);
  // However the campaign ends (an exception, a signal), its cluster does not outlive it.
  const stopAtExit = () => {
    spawnSync(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop'], {
      stdio: 'ignore',
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
  };
  process.once('exit', stopAtExit);
  const url = `postgres://postgres@127.0.0.1:${port}/paygate`;
  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await withClient(admin, (client) => client.query('CREATE DATABASE paygate'));

  return {
    port,
    url,
    dataDir,
    async shutdown(mode) {
      await runAsync('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'], user);
    },
    async start() {
      await runAsync('pg_ctl', startArgs, user);
    },
    async terminatePlatformBackends() {
      const result = await withClient(admin, (client) =>
        client.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = 'paygate' AND pid <> pg_backend_pid()`,
        ),
      );
      return result.rows[0]?.n ?? 0;
    },
    async stop() {
      process.removeListener('exit', stopAtExit);
      await runAsync('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop'], user).catch(() => {});
    },
  };
}

/** Runs `work` on a fresh connection to `url`, closed afterwards. */
export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}
