import { timingSafeEqual } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import ssh2, { type Attributes, type Connection, type FileEntry, type SFTPWrapper } from 'ssh2';
import { fingerprintOf, type AuthorizedKey } from './keys.js';

const { Server, utils } = ssh2;
const { OPEN_MODE, STATUS_CODE } = utils.sftp;

export interface SftpOptions {
  readonly hostKey: string;
  readonly authorized: AuthorizedKey;
  readonly username: string;
  /** The customer's root on disk: it sees it as `/`, with `/upload` and `/download` in it. */
  readonly root: string;
  /** Open write handles per path on disk (the bank takes no file still being written). */
  readonly writing: Map<string, number>;
  /** Called when a file under `/upload` may have become complete (closed after writing, renamed). */
  readonly uploaded: () => void;
  /** A session with no SFTP request for this long is ended. */
  readonly idleTimeoutMs: number;
  readonly log: Logger;
}

/** Where the customer may write: `/upload` and below. Everything else (`/`, `/download`) is read-only. */
const WRITABLE = '/upload';
/** Time allowed from the TCP connection to a successful authentication. */
const LOGIN_TIMEOUT_MS = 30_000;
/** The largest READ answered at once (a client asks again for the rest). */
const MAX_READ = 256 * 1024;

/** An SFTP request refused with a status. */
class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The customer's view of a path: absolute, normalised, with `/` its root. A path that would climb
 * above the root (`/../etc`, `upload/../../x`) or holds a NUL is refused, not clamped.
 */
export function virtualPath(input: string): string {
  if (input.includes('\0')) throw new Refusal(STATUS_CODE.BAD_MESSAGE, 'a path holds a NUL byte');
  const parts: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) throw new Refusal(STATUS_CODE.PERMISSION_DENIED, 'the path leads outside your root');
      parts.pop();
    } else {
      parts.push(segment);
    }
  }
  return `/${parts.join('/')}`;
}

const writable = (path: string) => path === WRITABLE || path.startsWith(`${WRITABLE}/`);
const below = (path: string) => path.startsWith(`${WRITABLE}/`);

function attributes(stats: Stats): Attributes {
  return {
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    size: stats.size,
    atime: Math.floor(stats.atimeMs / 1000),
    mtime: Math.floor(stats.mtimeMs / 1000),
  };
}

/** An `ls -l` line, as OpenSSH's sftp-server gives in READDIR's longname. */
function longname(name: string, stats: Stats, user: string): string {
  const type = stats.isDirectory() ? 'd' : stats.isSymbolicLink() ? 'l' : '-';
  const bits = 'rwxrwxrwx'
    .split('')
    .map((letter, index) => (stats.mode & (0o400 >> index) ? letter : '-'))
    .join('');
  const date = new Date(stats.mtimeMs).toUTCString().slice(5, 22); // "27 Nov 2026 21:30"
  return `${type}${bits} 1 ${user} ${user} ${String(stats.size).padStart(8)} ${date} ${name}`;
}

function statusOf(error: unknown): { code: number; message: string } {
  if (error instanceof Refusal) return { code: error.code, message: error.message };
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return { code: STATUS_CODE.NO_SUCH_FILE, message: 'No such file' };
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return { code: STATUS_CODE.PERMISSION_DENIED, message: 'Permission denied' };
    case 'EEXIST':
      return { code: STATUS_CODE.FAILURE, message: 'The target exists' };
    default:
      return { code: STATUS_CODE.FAILURE, message: code ?? 'Failure' };
  }
}

type Handle =
  | { readonly kind: 'file'; readonly file: FileHandle; readonly path: string; readonly writing: boolean }
  | { readonly kind: 'dir'; readonly path: string; entries: FileEntry[] | undefined; done: boolean };

/** Compares without leaking where two buffers differ. */
function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The bank's SFTP server (ssh2's server side): its own host key; public-key authentication only,
 * for one user and one key; the session is SFTP only (no shell, exec or forwarding), jailed to
 * the customer's root, with real files on disk. Keepalives find dead peers; a login that takes too
 * long and a session left idle are ended.
 */
export function createSftpServer(options: SftpOptions): InstanceType<typeof Server> {
  const { log } = options;
  const wantedUser = Buffer.from(options.username);

  return new Server(
    { hostKeys: [options.hostKey], keepaliveInterval: 15_000, keepaliveCountMax: 4, ident: 'paygate-bank' },
    (client: Connection, info) => {
      const peer = { ip: info.ip, port: info.port };
      // SFTP is request and answer: without this, Nagle's algorithm holds each small answer back.
      // (ssh2's server-side connection has it; its types only declare it on the client.)
      (client as Connection & { setNoDelay(noDelay: boolean): unknown }).setNoDelay(true);
      let loggedIn = false;
      const loginTimer = setTimeout(() => {
        if (loggedIn) return;
        log.warn(peer, 'sftp login timed out');
        client.end();
      }, LOGIN_TIMEOUT_MS);
      client.on('error', (error) => log.debug({ ...peer, err: error.message }, 'sftp connection error'));
      client.on('close', () => clearTimeout(loginTimer));

      client.on('authentication', (ctx) => {
        if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
        const offered = fingerprintOf(ctx.key.data);
        const userOk = same(Buffer.from(ctx.username), wantedUser);
        const keyOk = ctx.key.algo === options.authorized.type && same(ctx.key.data, options.authorized.blob);
        if (!userOk || !keyOk) {
          log.warn({ ...peer, username: ctx.username, key: offered }, 'sftp login refused: unknown user or key');
          return ctx.reject(['publickey']);
        }
        // Without a signature the client only asks whether this key would do; with one, it must verify.
        if (ctx.signature && options.authorized.key.verify(ctx.blob as Buffer, ctx.signature, ctx.hashAlgo) !== true) {
          log.warn({ ...peer, username: ctx.username }, 'sftp login refused: bad signature');
          return ctx.reject(['publickey']);
        }
        ctx.accept();
      });

      client.on('ready', () => {
        loggedIn = true;
        clearTimeout(loginTimer);
        log.info({ ...peer, username: options.username }, 'sftp login');
        client.on('session', (acceptSession) => {
          const session = acceptSession();
          session.on('sftp', (acceptSftp) => serve(acceptSftp(), client, options, peer));
          // ssh2 refuses what nobody listens for: pty, shell, exec, other subsystems, and (on the
          // connection) port forwarding and global requests. The session is SFTP only.
        });
      });
    },
  );
}

/** Serves one SFTP session with real files under the customer's root. */
function serve(sftp: SFTPWrapper, client: Connection, options: SftpOptions, peer: object): void {
  const { log, root } = options;
  const handles = new Map<number, Handle>();
  let nextHandle = 1;
  let idleTimer: NodeJS.Timeout | undefined;
  const touch = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      log.info(peer, 'sftp session idle: ending it');
      client.end();
    }, options.idleTimeoutMs);
  };
  touch();

  const onDisk = (path: string) => join(root, path);
  const handleOf = (buffer: Buffer): Handle => {
    const handle = buffer.length === 4 ? handles.get(buffer.readUInt32BE(0)) : undefined;
    if (!handle) throw new Refusal(STATUS_CODE.FAILURE, 'Invalid handle');
    return handle;
  };
  const newHandle = (handle: Handle): Buffer => {
    const id = nextHandle++;
    handles.set(id, handle);
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32BE(id, 0);
    return buffer;
  };
  const mustWrite = (path: string, strictlyBelow = false) => {
    if (!(strictlyBelow ? below(path) : writable(path))) {
      throw new Refusal(STATUS_CODE.PERMISSION_DENIED, `Permission denied: only ${WRITABLE} is writable`);
    }
  };
  const doneWriting = (path: string) => {
    const count = (options.writing.get(path) ?? 1) - 1;
    if (count <= 0) options.writing.delete(path);
    else options.writing.set(path, count);
  };

  /** Runs one request; a throw answers with the matching status. */
  const run = (reqid: number, operation: string, work: () => Promise<void>) => {
    touch();
    work().catch((error: unknown) => {
      const { code, message } = statusOf(error);
      if (code === STATUS_CODE.FAILURE || code === STATUS_CODE.PERMISSION_DENIED) {
        log.info({ ...peer, operation, status: code, err: message }, 'sftp request refused');
      }
      sftp.status(reqid, code, message);
    });
  };

  sftp.on('OPEN', (reqid, filename, flags, attrs) =>
    run(reqid, 'open', async () => {
      const path = virtualPath(filename);
      const wantsWrite = (flags & (OPEN_MODE.WRITE | OPEN_MODE.APPEND | OPEN_MODE.CREAT | OPEN_MODE.TRUNC)) !== 0;
      if (wantsWrite) mustWrite(path, true);
      let fsFlags =
        flags & OPEN_MODE.READ && wantsWrite ? constants.O_RDWR : wantsWrite ? constants.O_WRONLY : constants.O_RDONLY;
      if (flags & OPEN_MODE.CREAT) fsFlags |= constants.O_CREAT;
      if (flags & OPEN_MODE.TRUNC) fsFlags |= constants.O_TRUNC;
      if (flags & OPEN_MODE.EXCL) fsFlags |= constants.O_EXCL;
      if (flags & OPEN_MODE.APPEND) fsFlags |= constants.O_APPEND;
      const disk = onDisk(path);
      const file = await open(disk, fsFlags | constants.O_NOFOLLOW, (attrs.mode ?? 0o640) & 0o777);
      if (wantsWrite) options.writing.set(disk, (options.writing.get(disk) ?? 0) + 1);
      sftp.handle(reqid, newHandle({ kind: 'file', file, path: disk, writing: wantsWrite }));
    }),
  );

  sftp.on('READ', (reqid, buffer, offset, length) =>
    run(reqid, 'read', async () => {
      const handle = handleOf(buffer);
      if (handle.kind !== 'file') throw new Refusal(STATUS_CODE.FAILURE, 'Not a file handle');
      const data = Buffer.alloc(Math.min(length, MAX_READ));
      const { bytesRead } = await handle.file.read(data, 0, data.length, offset);
      if (bytesRead === 0) return sftp.status(reqid, STATUS_CODE.EOF);
      sftp.data(reqid, data.subarray(0, bytesRead));
    }),
  );

  sftp.on('WRITE', (reqid, buffer, offset, data) =>
    run(reqid, 'write', async () => {
      const handle = handleOf(buffer);
      if (handle.kind !== 'file' || !handle.writing)
        throw new Refusal(STATUS_CODE.PERMISSION_DENIED, 'Not open for writing');
      let written = 0;
      while (written < data.length) {
        const { bytesWritten } = await handle.file.write(data, written, data.length - written, offset + written);
        written += bytesWritten;
      }
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );

  sftp.on('FSTAT', (reqid, buffer) =>
    run(reqid, 'fstat', async () => {
      const handle = handleOf(buffer);
      const stats = handle.kind === 'file' ? await handle.file.stat() : await stat(handle.path);
      sftp.attrs(reqid, attributes(stats));
    }),
  );

  sftp.on('CLOSE', (reqid, buffer) =>
    run(reqid, 'close', async () => {
      const handle = handleOf(buffer);
      handles.delete(buffer.readUInt32BE(0));
      if (handle.kind === 'file') {
        try {
          await handle.file.close();
        } finally {
          if (handle.writing) {
            doneWriting(handle.path);
            options.uploaded();
          }
        }
      }
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );

  sftp.on('OPENDIR', (reqid, dirname) =>
    run(reqid, 'opendir', async () => {
      const path = virtualPath(dirname);
      const disk = onDisk(path);
      if (!(await stat(disk)).isDirectory()) throw new Refusal(STATUS_CODE.FAILURE, 'Not a directory');
      sftp.handle(reqid, newHandle({ kind: 'dir', path: disk, entries: undefined, done: false }));
    }),
  );

  sftp.on('READDIR', (reqid, buffer) =>
    run(reqid, 'readdir', async () => {
      const handle = handleOf(buffer);
      if (handle.kind !== 'dir') throw new Refusal(STATUS_CODE.FAILURE, 'Not a directory handle');
      if (handle.entries === undefined) {
        const names = (await readdir(handle.path)).sort();
        const entries: FileEntry[] = [];
        for (const name of names) {
          try {
            const stats = await lstat(join(handle.path, name));
            entries.push({
              filename: name,
              longname: longname(name, stats, options.username),
              attrs: attributes(stats),
            });
          } catch {
            // Gone between the listing and the lstat (renamed, taken by the bank): not listed.
          }
        }
        handle.entries = entries;
      }
      const batch = handle.entries.splice(0, 100);
      if (batch.length === 0) return sftp.status(reqid, STATUS_CODE.EOF);
      sftp.name(reqid, batch);
    }),
  );

  sftp.on('STAT', (reqid, path) =>
    run(reqid, 'stat', async () => {
      sftp.attrs(reqid, attributes(await stat(onDisk(virtualPath(path)))));
    }),
  );

  sftp.on('LSTAT', (reqid, path) =>
    run(reqid, 'lstat', async () => {
      sftp.attrs(reqid, attributes(await lstat(onDisk(virtualPath(path)))));
    }),
  );

  sftp.on('REALPATH', (reqid, path) =>
    run(reqid, 'realpath', async () => {
      const resolved = virtualPath(path);
      sftp.name(reqid, [{ filename: resolved, longname: resolved, attrs: {} as Attributes }]);
    }),
  );

  sftp.on('RENAME', (reqid, oldPath, newPath) =>
    run(reqid, 'rename', async () => {
      const from = virtualPath(oldPath);
      const to = virtualPath(newPath);
      mustWrite(from, true);
      mustWrite(to, true);
      const source = onDisk(from);
      const target = onDisk(to);
      // As OpenSSH's sftp-server: a file is renamed by link + unlink, so an existing target is
      // never replaced (link fails with EEXIST); a directory by rename, only when the target is free.
      if ((await lstat(source)).isDirectory()) {
        const taken = await lstat(target).then(
          () => true,
          () => false,
        );
        if (taken) throw new Refusal(STATUS_CODE.FAILURE, 'The target exists');
        await rename(source, target);
      } else {
        await link(source, target);
        await unlink(source);
      }
      sftp.status(reqid, STATUS_CODE.OK);
      if (to.endsWith('.xml')) options.uploaded();
    }),
  );

  sftp.on('REMOVE', (reqid, path) =>
    run(reqid, 'remove', async () => {
      const target = virtualPath(path);
      mustWrite(target, true);
      const disk = onDisk(target);
      if ((await lstat(disk)).isDirectory()) throw new Refusal(STATUS_CODE.FAILURE, 'Is a directory');
      await unlink(disk);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );

  sftp.on('MKDIR', (reqid, path, attrs) =>
    run(reqid, 'mkdir', async () => {
      const target = virtualPath(path);
      mustWrite(target, true);
      await mkdir(onDisk(target), (attrs.mode ?? 0o750) & 0o777);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );

  sftp.on('RMDIR', (reqid, path) =>
    run(reqid, 'rmdir', async () => {
      const target = virtualPath(path);
      mustWrite(target, true);
      await rmdir(onDisk(target));
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );

  sftp.on('close', () => {
    if (idleTimer) clearTimeout(idleTimer);
    for (const handle of handles.values()) {
      if (handle.kind !== 'file') continue;
      handle.file.close().catch(() => {});
      if (handle.writing) {
        doneWriting(handle.path);
        options.uploaded();
      }
    }
    handles.clear();
  });
}
