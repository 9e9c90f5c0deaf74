import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

/**
 * Writes `data` to `path` so a reader (or a restart after kill -9) sees the old file or the new
 * one, never a mix: the bytes go to `temporary` (by default beside `path`), are fsynced, and the
 * temporary file is renamed over `path`. `mode` applies to a file created here (default 0600: a
 * simulator's state is its own).
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { readonly mode?: number; readonly temporary?: string } = {},
): void {
  const temporary = options.temporary ?? `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', options.mode ?? 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}
