import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { loadMasterKeys } from '../src/crypto/master-key.js';

const dir = mkdtempSync(join(tmpdir(), 'paygate-master-key-'));
const KEY = Buffer.alloc(32, 7).toString('base64');
const production = {
  PAYGATE_ENV: 'production',
  PAYGATE_DATA_DIR: join(dir, 'data'),
  PAYGATE_EMBEDDED_PRODUCTION: 'true',
};

function keyFile(name: string, text: string, mode: number): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

describe('PAYGATE_MASTER_KEY_FILE', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the key from a file of mode 0600, relative to the working directory, and production starts with it', () => {
    keyFile('master.key', `${KEY}\n`, 0o600);
    const config = parseConfig({ ...production, PAYGATE_MASTER_KEY_FILE: 'master.key' }, {}, dir);
    assert.equal(config.masterKey, KEY);
    assert.deepEqual(Buffer.from(loadMasterKeys(config).current.key), Buffer.alloc(32, 7));
  });

  it('refuses a key file that group or others can read, saying how to fix it', () => {
    const file = keyFile('open.key', KEY, 0o644);
    assert.throws(
      () => parseConfig({ ...production, PAYGATE_MASTER_KEY_FILE: file }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message ===
          `invalid configuration: PAYGATE_MASTER_KEY_FILE ${file} is readable by others (mode 0644): chmod 600 ${file}`,
    );
  });

  it('refuses a missing file, a file that is not 32 bytes of base64, and both variables at once', () => {
    assert.throws(
      () => parseConfig({ ...production, PAYGATE_MASTER_KEY_FILE: join(dir, 'absent.key') }),
      /PAYGATE_MASTER_KEY_FILE .*absent\.key cannot be read \(ENOENT\)/,
    );
    const short = keyFile('short.key', Buffer.alloc(16).toString('base64'), 0o600);
    assert.throws(
      () => parseConfig({ ...production, PAYGATE_MASTER_KEY_FILE: short }),
      /must hold the base64 of 32 bytes \(openssl rand -base64 32\)$/,
    );
    const good = keyFile('good.key', KEY, 0o400);
    assert.throws(
      () => parseConfig({ ...production, PAYGATE_MASTER_KEY_FILE: good, PAYGATE_MASTER_KEY: KEY }),
      /set PAYGATE_MASTER_KEY or PAYGATE_MASTER_KEY_FILE, not both/,
    );
  });

  it('production without either says which variable to set', () => {
    assert.throws(
      () => parseConfig(production),
      /PAYGATE_MASTER_KEY is required in production: set PAYGATE_MASTER_KEY_FILE to a file holding it \(mode 0600\), or PAYGATE_MASTER_KEY$/,
    );
  });
});
