import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CliError } from './failure.js';

/** What `paygate backup` wrote. */
export interface BackupReport {
  readonly file: string;
  readonly bytes: number;
  readonly seconds: number;
}

/** The server's answer to a refused operator request, as the one line the command line prints. */
export type Refusal = (response: Response) => Promise<CliError>;

/**
 * `npx paygate backup --out FILE`: the running server dumps its embedded database between
 * transactions and streams it here (the server owns the data directory, so the dump can only be
 * taken there). The archive is written to `FILE.partial` (mode 0600: it holds the payers' data),
 * checked to be the whole gzip stream the server announced, synced, and only then renamed to
 * FILE, so that a FILE that exists is a complete backup.
 */
export async function runBackup(
  target: { readonly url: string; readonly token: string },
  out: string,
  refusal: Refusal,
): Promise<BackupReport> {
  if (existsSync(out)) throw new CliError(`${out} exists: give a new file name (a backup never overwrites one)`);
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(`${target.url.replace(/\/$/, '')}/admin/v1/backup`, {
      headers: { authorization: `Bearer ${target.token}` },
    });
  } catch (error) {
    throw new CliError(`cannot reach the Paygate server at ${target.url}: is it running (npm start)?`, 1, {
      cause: error,
    });
  }
  if (!response.ok || !response.body) throw await refusal(response);
  const announced = Number(response.headers.get('content-length'));
  const partial = `${out}.partial`;
  let bytes = 0;
  try {
    const counted = Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
    counted.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
    await pipeline(counted, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
    if (Number.isFinite(announced) && bytes !== announced) {
      throw new CliError(`the backup was cut off (${bytes} of ${announced} bytes); nothing was written to ${out}`);
    }
    // The whole archive decompresses: nothing was lost or changed on the way.
    await pipeline(
      createReadStream(partial),
      createGunzip(),
      new Writable({
        write: (_chunk, _encoding, done) => done(),
      }),
    ).catch((error: unknown) => {
      throw new CliError(
        `the backup is not a whole gzip archive (${(error as Error).message}); nothing was written to ${out}`,
      );
    });
    const handle = await open(partial, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    renameSync(partial, out);
  } catch (error) {
    rmSync(partial, { force: true });
    if (error instanceof CliError) throw error;
    throw new CliError(`the backup failed: ${(error as Error).message}; nothing was written to ${out}`, 1, {
      cause: error,
    });
  }
  return { file: out, bytes, seconds: Math.round((performance.now() - started) / 10) / 100 };
}
