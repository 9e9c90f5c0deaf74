/**
 * One owner per data directory. A process that keeps state in a directory (the platform's
 * embedded database, a simulator's journal) takes an exclusive lock on `<directory>/owner.lock`
 * before it reads or writes anything there, and holds it for as long as it runs. The lock is the
 * kernel's (an advisory lock on an open file), so it goes when the process goes, however it ends:
 * a SIGKILL never leaves a stale lock behind, unlike a pid file or a lock directory. A second
 * opener is refused at once, told the directory and the owner's pid.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/**
 * fs-native-extensions (Holepunch; it ships no types): `tryLock(fd)` asks for an exclusive
 * advisory lock without waiting, true when granted. On Linux it is an open-file-description lock
 * (`F_OFD_SETLK`), so it belongs to that descriptor, and the kernel drops it when the descriptor
 * is closed or the process dies; on macOS a `flock`, which behaves the same way.
 */
const { tryLock } = createRequire(import.meta.url)('fs-native-extensions') as { tryLock(fd: number): boolean };

/** The lock file inside a locked directory; it also names the owner, for the refusal's message. */
export const LOCK_FILE = 'owner.lock';

/** Who holds a directory, as its lock file says. */
export interface DirectoryOwner {
  readonly pid: number;
  /** What the owner is, e.g. "paygate server" or "paygate-psp". */
  readonly role: string;
}

/** Thrown by {@link lockDirectory} when another open file holds the directory's lock. */
export class DirectoryInUseError extends Error {
  constructor(
    readonly directory: string,
    readonly owner: DirectoryOwner | undefined,
  ) {
    const who = owner ? `${owner.role} (pid ${owner.pid})` : 'another process';
    super(`the data directory ${directory} is in use by ${who}; stop it first, or use another directory`);
    this.name = 'DirectoryInUseError';
  }
}

/** A held lock. `release` is idempotent; the process ending releases it too. */
export interface DirectoryLock {
  readonly directory: string;
  release(): void;
}

/**
 * Takes the exclusive lock of `directory` (created if missing, mode 0700) for this process, as
 * `role`, or throws {@link DirectoryInUseError}. Each call opens its own descriptor, so a second
 * call in the same process for the same directory is refused as well.
 */
export function lockDirectory(directory: string, role: string): DirectoryLock {
  const path = resolve(directory);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const file = join(path, LOCK_FILE);
  // Read and write: the kernel grants an exclusive (write) lock only on a descriptor open for writing.
  const fd = openSync(file, 'a+', 0o600);
  let granted = false;
  try {
    granted = tryLock(fd);
  } finally {
    if (!granted) closeSync(fd);
  }
  if (!granted) throw new DirectoryInUseError(path, readOwner(file));
  ftruncateSync(fd, 0);
  writeSync(fd, `${JSON.stringify({ pid: process.pid, role } satisfies DirectoryOwner)}\n`);
  let held = true;
  return {
    directory: path,
    release() {
      if (!held) return;
      held = false;
      ftruncateSync(fd, 0);
      closeSync(fd); // closing the descriptor drops the lock
    },
  };
}

/** The owner a lock file names; undefined while the owner has not written it yet or it is unreadable. */
function readOwner(file: string): DirectoryOwner | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { pid, role } = parsed as Record<string, unknown>;
    return Number.isSafeInteger(pid) && typeof role === 'string' ? { pid: pid as number, role } : undefined;
  } catch {
    return undefined;
  }
}
