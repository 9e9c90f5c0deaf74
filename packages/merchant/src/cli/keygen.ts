import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { generateSigningKey, signingKeyToPem } from '@paygate/protocol';
import { CliError } from './config.js';

/**
 * Writes a file that is created with `mode` and never exists with wider permissions. Without
 * `replace` it refuses a file already there (O_EXCL, so no race with a check before). With
 * `replace`, the content goes to a fresh file beside it, which is then renamed over the old one:
 * rewriting the old file in place would put the new key, for a moment or for good, under the
 * old file's mode (and into every other name the old file has).
 */
function writeNewFile(path: string, content: string, mode: number, replace: boolean): void {
  const target = replace ? join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`) : path;
  try {
    writeFileSync(target, content, { mode, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CliError(`${path} exists already; pass --force to replace the key pair`);
    }
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
  if (target === path) return;
  try {
    renameSync(target, path);
  } catch (error) {
    rmSync(target, { force: true });
    throw new CliError(`cannot replace ${path}: ${(error as Error).message}`);
  }
}

/**
 * Whether git would commit `file`: inside a work tree and not ignored. False when git is not
 * installed or says anything else: the warning this feeds is a courtesy, never a failure.
 */
function exposedToGit(file: string): boolean {
  const cwd = dirname(file);
  const inside = spawnSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd, encoding: 'utf8' });
  if (inside.error || inside.status !== 0 || inside.stdout.trim() !== 'true') return false;
  // Exit 0: ignored; 1: not ignored; anything else: git could not tell.
  const ignored = spawnSync('git', ['check-ignore', '-q', '--', basename(file)], { cwd });
  return !ignored.error && ignored.status === 1;
}

/**
 * `keygen`: a fresh Ed25519 key pair in `dir` (private.pem mode 0600, public.pem). Prints the
 * public key to upload, base64 of the raw 32 bytes, alone on stdout; guidance goes to stderr,
 * with a warning when git would commit the private key.
 */
export function keygen(dir: string, force: boolean): void {
  const privatePath = join(dir, 'private.pem');
  const publicPath = join(dir, 'public.pem');
  if (!force && (existsSync(privatePath) || existsSync(publicPath))) {
    throw new CliError(`${privatePath} or ${publicPath} exists already; pass --force to replace the key pair`);
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new CliError(`cannot create the key directory ${dir}: ${(error as Error).message}`);
  }
  const key = generateSigningKey();
  const { privateKeyPem, publicKeyPem } = signingKeyToPem(key);
  writeNewFile(privatePath, privateKeyPem, 0o600, force);
  writeNewFile(publicPath, publicKeyPem, 0o644, force);
  const relativeDir = relative(process.cwd(), dir);
  const shown = relativeDir.startsWith('..') ? dir : relativeDir || '.';
  // The onboarding file named after the key folder (merchant-keys-live → merchant-live.json), so
  // that a second key pair's hint does not overwrite the first one's merchant.json.
  const suffix = /^merchant-keys(.*)$/.exec(basename(dir))?.[1] ?? '';
  const onboarding = `merchant${suffix}.json`;
  const taken = existsSync(onboarding) ? ` (${onboarding} exists: choose another name)` : '';
  process.stderr.write(
    `Wrote ${join(shown, 'private.pem')} (your private key: keep it secret, never upload it; mode 0600)\n` +
      `  and ${join(shown, 'public.pem')}.\n` +
      'The public key to upload (base64 of the raw 32 bytes) follows on stdout. Onboard with:\n' +
      `  npx paygate merchant create --name "My shop" --public-key @${join(shown, 'public.pem')} --json > ${onboarding}${taken}\n`,
  );
  if (exposedToGit(privatePath)) {
    process.stderr.write(
      `warning: ${join(shown, 'private.pem')} is inside a git work tree and not ignored: add its directory ` +
        'to .gitignore before your next commit, or keep the key outside the repository\n',
    );
  }
  process.stdout.write(`${key.publicKey.toString('base64')}\n`);
}
