import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { tryLock, unlock } from 'fs-native-extensions';

/** The data directory is held by another live process. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dir: string,
    readonly ownerPid: number | undefined,
  ) {
    super(
      `the data directory ${dir} is in use by ${ownerPid === undefined ? 'another process' : `pid ${ownerPid}`}` +
        ' (one simulator per directory)',
    );
  }
}

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/**
 * Takes the exclusive lock of a data directory: an OS lock (`fs-native-extensions` `tryLock`, an
 * open-file-description lock on Linux) on `<dir>/lock`, which then holds the owner's pid. The OS
 * drops the lock when the process dies, even by SIGKILL, so a stale file never blocks a restart;
 * a second process on the same directory gets {@link DataDirLockedError} naming the owner's pid.
 */
export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'lock');
  // 'a+': opening must not truncate the owner's pid before we know the lock is ours.
  const fd = openSync(path, 'a+', 0o600);
  let locked = false;
  try {
    locked = tryLock(fd);
  } finally {
    if (!locked) closeSync(fd);
  }
  if (!locked) {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    throw new DataDirLockedError(dir, Number.isSafeInteger(pid) && pid > 0 ? pid : undefined);
  }
  ftruncateSync(fd, 0);
  writeSync(fd, `${process.pid}\n`);
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      unlock(fd);
      closeSync(fd);
    },
  };
}
