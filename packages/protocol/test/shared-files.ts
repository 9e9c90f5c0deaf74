import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A file of the shared folder (the specification, the independent vectors): `PAYGATE_SHARED_DIR`'s,
 * else the one beside the checkout (`../shared`, where CI runs); undefined when neither holds it
 * (a clone elsewhere), for the caller to fall back on the copy committed with its tests.
 */
export function sharedFile(path: string): string | undefined {
  const dirs = [process.env.PAYGATE_SHARED_DIR, join(import.meta.dirname, '../../../../shared')];
  return dirs
    .map((dir) => dir && join(dir, path))
    .find((file): file is string => Boolean(file) && existsSync(file as string));
}
