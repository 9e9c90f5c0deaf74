/**
 * A start whose PostgreSQL cannot be used ends in one line naming the database and what to run,
 * not a stack trace with the driver's error object: a spawned `main` against a server that does
 * not answer, and (with TEST_DATABASE_URL) against a database name that does not exist there.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../../../deploy/cluster.mjs';

const root = join(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'paygate-db-start-'));

function start(databaseUrl: string) {
  const { NODE_OPTIONS: _options, NODE_TEST_CONTEXT: _context, ...env } = process.env;
  return spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...env,
      DATABASE_URL: databaseUrl,
      PAYGATE_DATA_DIR: dataDir,
      PAYGATE_DATABASE_CONNECT_TIMEOUT: '10s',
      PORT: '0',
      OTEL_SDK_DISABLED: 'true',
    },
  });
}

describe('a start that cannot use its database', () => {
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('says in one line that PostgreSQL does not answer, where, and what to do', async () => {
    const port = await freePort();
    const run = start(`postgres://paygate:s3cret@127.0.0.1:${port}/shop`);
    assert.equal(run.status, 1);
    assert.equal(
      run.stderr,
      `paygate: cannot reach PostgreSQL at 127.0.0.1:${port} (DATABASE_URL) (ECONNREFUSED) for database "shop": start PostgreSQL or correct DATABASE_URL (without DATABASE_URL the embedded database is used)\n`,
    );
    assert.doesNotMatch(run.stdout + run.stderr, /s3cret/);
  });

  it(
    'says in one line that the database does not exist, and the createdb to run',
    { skip: !process.env.TEST_DATABASE_URL },
    () => {
      const url = new URL(process.env.TEST_DATABASE_URL as string);
      const name = `paygate_absent_${randomBytes(6).toString('hex')}`;
      url.pathname = `/${name}`;
      const run = start(url.toString());
      assert.equal(run.status, 1);
      const host = url.hostname;
      const port = url.port || '5432';
      const user = decodeURIComponent(url.username) || 'postgres';
      assert.equal(
        run.stderr,
        `paygate: database "${name}" does not exist on PostgreSQL at ${host}:${port} (DATABASE_URL): create it with createdb -h ${host} -p ${port} -U ${user} ${name}, then start again\n`,
      );
    },
  );
});
