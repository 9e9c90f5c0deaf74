/**
 * The master key (issue 25, items 2 and 7): a start whose master key cannot open the stored
 * platform keys stops with one line (the key check stored with the sealed keys), on both
 * databases and for the sandbox that generates a new key into a fresh data directory while the
 * keys live in PostgreSQL; and the rotation: both keys during the switch, `paygate master-key
 * reseal` while the platform runs, then only the new key opens anything.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { boxPublicKeyFrom } from '@paygate/protocol';
import { parseConfig } from '../src/config.js';
import { generateMasterKey, MasterKeyError, masterKeyFrom, secretSealer } from '../src/crypto/master-key.js';
import { openDatabase } from '../src/db/db.js';
import { PLATFORM_KEY_CACHE_MS } from '../src/modules/platform-keys/service.js';
import { type Platform, startPlatform } from '../src/platform.js';
import { createMerchant, databases, freshPostgres, paymentInput, post, type TestMerchant } from './harness.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const SERVER = join(ROOT, 'packages/server/src/main.ts');
const CLI = join(ROOT, 'packages/server/src/cli/main.ts');
const ADMIN_TOKEN = 'master-key-test-admin-token-0123456789';

/** Runs `npm start`'s entry point until it listens (then stops it) or exits; its output and exit code. */
async function startProcess(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', SERVER], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'info',
      PAYGATE_WORKERS: 'false',
      PAYGATE_SHUTDOWN_DRAIN: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000; // generous: a loaded machine starts slowly
  while (Date.now() < deadline && child.exitCode === null && !stdout.includes('paygate listening')) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (child.exitCode === null) child.kill(stdout.includes('paygate listening') ? 'SIGTERM' : 'SIGKILL');
  const code = await exited;
  return { code, output: stderr };
}

/** Where a test's platform keeps its data: a data directory, and a PostgreSQL database for `postgres`. */
interface Store {
  readonly env: Record<string, string>;
  drop(): Promise<void>;
}

async function newStore(database: 'pglite' | 'postgres'): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'paygate-master-key-'));
  const pg = database === 'postgres' ? await freshPostgres() : undefined;
  return {
    env: { PAYGATE_DATA_DIR: dataDir, ...(pg ? { DATABASE_URL: pg.url } : {}) },
    async drop() {
      await pg?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a platform in this process with the given master keys over `store`. */
function startWith(store: Store, keys: { current: string; previous?: string }, now?: () => number): Promise<Platform> {
  const config = parseConfig({
    ...store.env,
    PORT: '0',
    HOST: '127.0.0.1',
    PAYGATE_WORKERS: 'false',
    PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    PAYGATE_MASTER_KEY: keys.current,
    ...(keys.previous ? { PAYGATE_MASTER_KEY_PREVIOUS: keys.previous } : {}),
  });
  return startPlatform(config, { logger: false, ...(now ? { now } : {}) });
}

/** `merchant` sealing its requests to the body key `keyId` instead of the one it onboarded with. */
async function sealingTo(platform: Platform, merchant: TestMerchant, keyId: string): Promise<TestMerchant> {
  const key = (await platform.services.platformKeys.list()).find((k) => k.keyId === keyId);
  const publicKey = boxPublicKeyFrom(key?.publicKey ?? '');
  if (!publicKey.ok) throw new Error(`no body key ${keyId}`);
  return { ...merchant, bodyKey: { keyId, publicKey: publicKey.value } };
}

/** A payment create sealed to each of `senders`' body keys answers 200: every body key opens. */
async function everyBodyKeyOpens(platform: Platform, senders: readonly TestMerchant[]): Promise<void> {
  for (const sender of senders) {
    const created = await post(platform, sender, '/api/v1/payments', paymentInput());
    assert.equal(created.status, 200, `${sender.bodyKey.keyId}: ${JSON.stringify(created.body)}`);
  }
}

/** The rows of platform_keys as stored, read with the platform stopped. */
async function storedKeys(store: Store) {
  const db = await openDatabase({ databaseUrl: store.env.DATABASE_URL, dataDir: store.env.PAYGATE_DATA_DIR as string });
  try {
    const rows = await db.query<{ key_id: string; secret_sealed: Uint8Array; sealed_under: string }>(
      'SELECT key_id, secret_sealed, sealed_under FROM platform_keys ORDER BY id',
    );
    const checks = await db.query<{ key_id: string }>('SELECT key_id FROM master_key_checks ORDER BY key_id');
    return { rows: rows.rows, checks: checks.rows.map((row) => row.key_id) };
  } finally {
    await db.close();
  }
}

const opens = (key: string, row: { key_id: string; secret_sealed: Uint8Array; sealed_under: string }) => {
  const sealer = secretSealer({ current: masterKeyFrom(Buffer.from(key, 'base64')), previous: undefined });
  try {
    sealer.open(Buffer.from(row.secret_sealed), row.key_id, sealer.currentKeyId);
    return true;
  } catch {
    return false;
  }
};

for (const database of databases()) {
  describe(`a wrong master key stops the start with one line (${database})`, () => {
    const stores: Store[] = [];
    after(async () => {
      for (const store of stores) await store.drop();
    });

    it('a process started with another PAYGATE_MASTER_KEY exits 1 naming both keys; the right one starts', async () => {
      const store = await newStore(database);
      stores.push(store);
      const right = generateMasterKey();
      const first = await startWith(store, { current: right });
      const rightId = first.services.platformKeys.masterKeyStatus().then((status) => status.currentKeyId);
      const expectedId = await rightId;
      await first.close();

      const wrong = generateMasterKey();
      const refused = await startProcess({ ...store.env, PAYGATE_MASTER_KEY: wrong });
      assert.equal(refused.code, 1, refused.output);
      const lines = refused.output.trim().split('\n');
      assert.equal(lines.length, 1, refused.output);
      assert.match(
        lines[0] ?? '',
        /^paygate: the master key mk_[0-9a-f]{16} \(from PAYGATE_MASTER_KEY\) does not open/,
      );
      assert.ok(lines[0]?.includes(`sealed under ${expectedId}`), lines[0]);
      assert.match(lines[0] ?? '', /start with that key in PAYGATE_MASTER_KEY/);

      const again = await startProcess({ ...store.env, PAYGATE_MASTER_KEY: right });
      assert.equal(again.code, 0, again.output);
    });
  });
}

if (databases().includes('postgres')) {
  describe('the sandbox over DATABASE_URL with a fresh data directory (postgres)', () => {
    it('refuses to start with a line saying the master key was generated just now, and what to do', async () => {
      const pg = await freshPostgres();
      const dirs = [mkdtempSync(join(tmpdir(), 'paygate-mk-a-')), mkdtempSync(join(tmpdir(), 'paygate-mk-b-'))];
      try {
        const env = { DATABASE_URL: pg.url, PAYGATE_MASTER_KEY: '' };
        const first = await startProcess({ ...env, PAYGATE_DATA_DIR: dirs[0] as string });
        assert.equal(first.code, 0, first.output);
        // A fresh data directory: the sandbox generates a new master.key, the keys are in PostgreSQL.
        const fresh = await startProcess({ ...env, PAYGATE_DATA_DIR: dirs[1] as string });
        assert.equal(fresh.code, 1, fresh.output);
        const lines = fresh.output.trim().split('\n');
        assert.equal(lines.length, 1, fresh.output);
        assert.ok(lines[0]?.includes(`${join(dirs[1] as string, 'master.key')}, generated just now`), lines[0]);
        assert.match(lines[0] ?? '', /does not open the sandbox platform keys in this database/);
        // Nothing was changed: the first data directory's key still starts.
        const back = await startProcess({ ...env, PAYGATE_DATA_DIR: dirs[0] as string });
        assert.equal(back.code, 0, back.output);
        // `paygate worker` (it signs webhooks) is refused the same way, with the same one line.
        const worker = await run(process.execPath, ['--conditions=source', '--import', 'tsx', CLI, 'worker'], {
          cwd: ROOT,
          env: { ...process.env, ...env, PAYGATE_DATA_DIR: dirs[1] as string },
        }).then(
          () => ({ code: 0, stderr: '' }),
          (error: { code: number; stderr: string }) => error,
        );
        assert.equal(worker.code, 1, worker.stderr);
        assert.equal(worker.stderr.trim().split('\n').length, 1, worker.stderr);
        assert.match(worker.stderr, /does not open the sandbox platform keys in this database/);
      } finally {
        await pg.drop();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

for (const database of databases()) {
  describe(`master key rotation (${database})`, () => {
    const stores: Store[] = [];
    after(async () => {
      for (const store of stores) await store.drop();
    });

    it('both keys during the switch, reseal while running (paygate master-key reseal), then only the new key opens', async () => {
      const store = await newStore(database);
      stores.push(store);
      const oldKey = generateMasterKey();
      const newKey = generateMasterKey();

      // Under the old key: a merchant, and a second body key (the first stays enabled).
      const before = await startWith(store, { current: oldKey });
      const merchant = await createMerchant(before);
      const firstBodyKey = merchant.bodyKey.keyId;
      const rotated = await before.services.platformKeys.rotate('body');
      await before.services.platformKeys.rotate('webhook');
      const senders = [merchant, await sealingTo(before, merchant, rotated.keyId)];
      await everyBodyKeyOpens(before, senders);
      const oldId = (await before.services.platformKeys.masterKeyStatus()).currentKeyId;
      await before.close();

      // The switch: new key current, old key previous. Everything still opens.
      const during = await startWith(store, { current: newKey, previous: oldKey });
      const newId = (await during.services.platformKeys.masterKeyStatus()).currentKeyId;
      assert.notEqual(newId, oldId);
      await everyBodyKeyOpens(during, senders);
      const statusDuring = await during.services.platformKeys.masterKeyStatus();
      assert.deepEqual([...statusDuring.checkedKeyIds].sort(), [oldId, newId].sort());
      assert.deepEqual(statusDuring.sealedUnder, { [oldId]: 4 });

      // The re-seal, through the command line and the operator API of the running platform.
      const cliEnv = { ...process.env, PAYGATE_URL: during.url, PAYGATE_ADMIN_TOKEN: ADMIN_TOKEN };
      const resealed = await run(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', CLI, 'master-key', 'reseal', '--json'],
        {
          cwd: ROOT,
          env: cliEnv,
        },
      );
      const result = JSON.parse(resealed.stdout) as {
        currentKeyId: string;
        resealed: string[];
        retiredMasterKeyIds: string[];
      };
      assert.equal(result.currentKeyId, newId);
      assert.equal(result.resealed.length, 4);
      assert.deepEqual(result.retiredMasterKeyIds, [oldId]);
      // It keeps serving across the re-seal, and a second re-seal has nothing to do.
      await everyBodyKeyOpens(during, senders);
      assert.ok(await during.services.platformKeys.webhookSigner());
      const status = await run(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', CLI, 'master-key', 'status', '--json'],
        {
          cwd: ROOT,
          env: cliEnv,
        },
      );
      assert.deepEqual(JSON.parse(status.stdout), {
        currentKeyId: newId,
        checkedKeyIds: [newId],
        sealedUnder: { [newId]: 4 },
      });
      assert.deepEqual((await during.services.platformKeys.resealUnderCurrentKey()).resealed, []);
      await during.close();

      // As stored: every private key opens under the new key, none under the old one.
      const stored = await storedKeys(store);
      assert.equal(stored.rows.length, 4);
      assert.deepEqual(stored.checks, [newId]);
      for (const row of stored.rows) {
        assert.equal(row.sealed_under, newId);
        assert.ok(opens(newKey, row), `${row.key_id} opens under the new key`);
        assert.ok(!opens(oldKey, row), `${row.key_id} does not open under the old key`);
      }

      // Restarted with only the new key: every body key opens, the webhook key signs.
      const afterwards = await startWith(store, { current: newKey });
      try {
        await everyBodyKeyOpens(afterwards, senders);
        const signer = await afterwards.services.platformKeys.webhookSigner();
        assert.ok(signer.keyid.startsWith('wk_test_'));
        assert.ok(senders.some((sender) => sender.bodyKey.keyId === firstBodyKey));
      } finally {
        await afterwards.close();
      }

      // The old key opens nothing: alone, or even as the previous key of a wrong current one.
      await assert.rejects(startWith(store, { current: oldKey }), MasterKeyError);
      await assert.rejects(startWith(store, { current: generateMasterKey(), previous: oldKey }), MasterKeyError);
    });
  });
}

if (databases().includes('postgres')) {
  describe('master key rotation with two instances on one PostgreSQL', () => {
    it('a rolling restart onto both keys, the re-seal through one: the other keeps signing and opening', async () => {
      const store = await newStore('postgres');
      const oldKey = generateMasterKey();
      const newKey = generateMasterKey();
      let offset = 0;
      const clock = () => Date.now() + offset;
      let a = await startWith(store, { current: oldKey });
      let b: Platform | undefined;
      try {
        const merchant = await createMerchant(a);
        // The rolling restart: B comes up with both keys while A still runs with the old one.
        b = await startWith(store, { current: newKey, previous: oldKey }, clock);
        await everyBodyKeyOpens(a, [merchant]);
        await everyBodyKeyOpens(b, [merchant]);
        await a.close();
        a = await startWith(store, { current: newKey, previous: oldKey });
        const signerBefore = await b.services.platformKeys.webhookSigner();

        const resealed = await a.services.platformKeys.resealUnderCurrentKey();
        assert.equal(resealed.resealed.length, 2);
        // B reads the re-sealed rows once its cache runs out, and opens them with the new key.
        offset += PLATFORM_KEY_CACHE_MS;
        await everyBodyKeyOpens(b, [merchant]);
        assert.equal((await b.services.platformKeys.webhookSigner()).keyid, signerBefore.keyid);
        await b.close();
        b = await startWith(store, { current: newKey });
        await everyBodyKeyOpens(b, [merchant]);
        await assert.rejects(startWith(store, { current: oldKey }), MasterKeyError);
      } finally {
        await b?.close();
        await a.close();
        await store.drop();
      }
    });
  });
}
