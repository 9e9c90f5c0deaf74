/**
 * Debian's OpenSSH server (`openssh-server`) as a bank's SFTP server, for the sepa-sftp tests:
 * `sshd` started on a free loopback port with a host key, a configuration and an authorized keys
 * file of the test's own, and OpenSSH's own `sftp-server` — the SFTP most banks run, with its
 * real rename and permission rules. Public-key authentication only.
 */
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

export const SSHD = '/usr/sbin/sshd';
export const SFTP_SERVER = '/usr/lib/openssh/sftp-server';

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
