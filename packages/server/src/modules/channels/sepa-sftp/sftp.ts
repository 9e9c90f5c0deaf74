import { createHash } from 'node:crypto';
import ssh2, { type SFTPWrapper } from 'ssh2';

// ssh2 is CommonJS: its members come from the default export.
const { Client } = ssh2;
type Client = InstanceType<typeof Client>;

/** How to reach the bank's SFTP server (from the channel's settings). */
export interface SftpTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** The platform's private key (OpenSSH or PEM), read at start. */
  readonly privateKey: Buffer;
  /** The server's host key fingerprint, `SHA256:<base64>` as `ssh-keygen -lf` prints it. */
  readonly hostKey: string;
  /** Milliseconds the connection (handshake and authentication) and each operation may take. */
  readonly timeoutMs: number;
  /** An unused connection is closed after this long. */
  readonly idleMs: number;
}

/** An entry of a directory listing: regular files only. */
export interface RemoteFile {
  readonly name: string;
  readonly size: number;
  /** Modification time, unix seconds. */
  readonly mtime: number;
}

/** A write request's payload (OpenSSH's own client sends 32 KiB). */
const CHUNK_BYTES = 32 * 1024;
/** Write requests outstanding at once on one upload. */
const WRITES_IN_FLIGHT = 16;

/** SFTP status codes (draft-ietf-secsh-filexfer-02) the platform tells apart. */
export const SFTP_NO_SUCH_FILE = 2;

/** An SFTP or SSH failure: the connection, the host key, authentication, an operation or its timeout. */
export class SftpError extends Error {
  constructor(
    message: string,
    /** The SFTP status code of a refused operation, when there is one. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SftpError';
  }
}

/** A host key's fingerprint as OpenSSH prints it: `SHA256:` and the unpadded base64 of its SHA-256. */
export function fingerprintOf(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** What the platform does on the server, each call under the operation timeout. */
export interface SftpOps {
  list(dir: string): Promise<RemoteFile[]>;
  /** The size of a file; undefined when there is no such file. */
  size(path: string): Promise<number | undefined>;
  /** Writes `bytes` to `path`, created or truncated. */
  write(path: string, bytes: Buffer): Promise<void>;
  /** Renames; the server's refusal (a target that exists, for OpenSSH) is an SftpError with its status. */
  rename(from: string, to: string): Promise<void>;
  /** Reads a whole file of at most `maxBytes`. */
  read(path: string, maxBytes: number): Promise<Buffer>;
}

interface Connection {
  readonly client: Client;
  readonly sftp: SFTPWrapper;
}

/**
 * One SFTP connection to the bank, opened when needed, reused while the channel is busy (the
 * uploads and listings in the same moment share it) and closed after `idleMs` unused. The host
 * key is pinned: a server presenting another one is refused during the handshake, before the
 * platform authenticates; authentication is by public key only. Every step has a timeout: the
 * handshake and authentication (`readyTimeout`), and each operation (a timeout ends the
 * connection, whose next use opens a new one).
 */
export class SftpSession {
  private connection: Promise<Connection> | undefined;
  private users = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly target: SftpTarget) {}

  /** Runs `work` over the session's connection (opening it if needed). */
  async use<T>(work: (ops: SftpOps) => Promise<T>): Promise<T> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.users++;
    try {
      if (!this.connection) {
        const opening = this.open();
        this.connection = opening;
        // A connection the server (or the network) ends is forgotten: the next use opens another.
        opening.then(
          ({ client }) =>
            client.once('close', () => {
              if (this.connection === opening) this.connection = undefined;
            }),
          () => {},
        );
      }
      const opened = this.connection;
      let connection: Connection;
      try {
        connection = await opened;
      } catch (error) {
        if (this.connection === opened) this.connection = undefined;
        throw error;
      }
      return await work(this.ops(connection, opened));
    } finally {
      this.users--;
      if (this.users === 0 && this.connection) {
        this.idleTimer = setTimeout(() => void this.close(), this.target.idleMs);
        this.idleTimer.unref();
      }
    }
  }

  /** Ends the connection, if any. */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    try {
      (await connection).client.end();
    } catch {
      // it never opened: nothing to end
    }
  }

  private drop(opened: Promise<Connection>, connection: Connection) {
    if (this.connection === opened) this.connection = undefined;
    connection.client.destroy();
  }

  private open(): Promise<Connection> {
    const { host, port, username, privateKey, hostKey, timeoutMs } = this.target;
    return new Promise<Connection>((resolve, reject) => {
      const client = new Client();
      let presented: string | undefined;
      let settled = false;
      const fail = (error: SftpError) => {
        if (settled) return;
        settled = true;
        client.destroy();
        reject(error);
      };
      client.on('ready', () => {
        client.sftp((error, sftp) => {
          if (error)
            return fail(new SftpError(`sftp subsystem refused: ${error.message}`, undefined, { cause: error }));
          settled = true;
          resolve({ client, sftp });
        });
      });
      client.on('error', (error: Error & { level?: string }) => {
        if (presented !== undefined && presented !== hostKey) {
          return fail(new SftpError(`host key ${presented} of ${host}:${port} is not the pinned ${hostKey}`));
        }
        const what = error.level === 'client-authentication' ? 'public key authentication refused' : error.message;
        fail(new SftpError(`${host}:${port}: ${what}`, undefined, { cause: error }));
      });
      client.on('close', () => {
        if (this.connection && !settled) fail(new SftpError(`${host}:${port}: connection closed`));
      });
      client.connect({
        host,
        port,
        username,
        readyTimeout: timeoutMs,
        // The raw host key, checked before any authentication is sent.
        hostVerifier: (key: Buffer) => {
          presented = fingerprintOf(key);
          return presented === hostKey;
        },
        // Public-key authentication only: no password, agent, keyboard-interactive or none.
        privateKey,
        authHandler: ['publickey'],
        keepaliveInterval: 15_000,
      });
      // SFTP is request and answer, 32 KiB at a time: without TCP_NODELAY each small request
      // waits on Nagle's algorithm for the previous answer's ACK (40-100 ms each; a 7 MiB
      // status file took 21 s to read instead of 0.3 s).
      client.setNoDelay(true);
    });
  }

  private ops(connection: Connection, opened: Promise<Connection>): SftpOps {
    const { sftp } = connection;
    const timed = <T>(what: string, run: (done: (error: unknown, value?: T) => void) => void): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.drop(opened, connection);
          reject(new SftpError(`${what}: no answer within ${this.target.timeoutMs} ms`));
        }, this.target.timeoutMs);
        run((error, value) => {
          clearTimeout(timer);
          if (error) {
            const code = (error as { code?: unknown }).code;
            reject(
              new SftpError(`${what}: ${(error as Error).message}`, typeof code === 'number' ? code : undefined, {
                cause: error,
              }),
            );
          } else resolve(value as T);
        });
      });
    return {
      list: async (dir) => {
        const entries = await timed<{ filename: string; attrs: { size: number; mtime: number; mode: number } }[]>(
          `list ${dir}`,
          (done) => sftp.readdir(dir, done),
        );
        // Regular files only (S_IFREG), whatever the server lists besides.
        return entries
          .filter((entry) => (entry.attrs.mode & 0o170000) === 0o100000)
          .map((entry) => ({ name: entry.filename, size: entry.attrs.size, mtime: entry.attrs.mtime }));
      },
      size: async (path) => {
        try {
          const stats = await timed<{ size: number }>(`stat ${path}`, (done) => sftp.stat(path, done));
          return stats.size;
        } catch (error) {
          if (error instanceof SftpError && error.status === SFTP_NO_SUCH_FILE) return undefined;
          throw error;
        }
      },
      write: async (path, bytes) => {
        const handle = await timed<Buffer>(`open ${path}`, (done) => sftp.open(path, 'w', 0o640, done));
        try {
          // In chunks the server takes in one packet each, up to WRITES_IN_FLIGHT outstanding at a
          // time (as OpenSSH's sftp client pipelines its requests), not one round trip per chunk.
          const offsets: number[] = [];
          for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) offsets.push(offset);
          const writeChunk = (offset: number) => {
            const chunk = bytes.subarray(offset, offset + CHUNK_BYTES);
            return timed<void>(`write ${path}`, (done) =>
              sftp.write(handle, chunk, 0, chunk.length, offset, (error) => done(error)),
            );
          };
          let next = 0;
          const lane = async () => {
            while (next < offsets.length) await writeChunk(offsets[next++] as number);
          };
          await Promise.all(Array.from({ length: Math.min(WRITES_IN_FLIGHT, offsets.length) }, lane));
        } finally {
          await timed<void>(`close ${path}`, (done) => sftp.close(handle, (error) => done(error))).catch(() => {});
        }
      },
      rename: (from, to) => timed<void>(`rename ${from}`, (done) => sftp.rename(from, to, (error) => done(error))),
      read: async (path, maxBytes) => {
        const handle = await timed<Buffer>(`open ${path}`, (done) => sftp.open(path, 'r', done));
        try {
          const chunks: Buffer[] = [];
          let total = 0;
          for (;;) {
            const buffer = Buffer.alloc(32 * 1024);
            const read = await timed<number>(`read ${path}`, (done) =>
              sftp.read(handle, buffer, 0, buffer.length, total, (error, bytesRead) => done(error, bytesRead)),
            ).catch((error: unknown) => {
              // OpenSSH answers EOF as a status; ssh2 gives it as a 0-byte read or an EOF error.
              if (error instanceof SftpError && error.status === 1) return 0;
              throw error;
            });
            if (read === 0) break;
            total += read;
            if (total > maxBytes) throw new SftpError(`${path} is larger than ${maxBytes} bytes`);
            chunks.push(buffer.subarray(0, read));
          }
          return Buffer.concat(chunks);
        } finally {
          await timed<void>(`close ${path}`, (done) => sftp.close(handle, (error) => done(error))).catch(() => {});
        }
      },
    };
  }
}
