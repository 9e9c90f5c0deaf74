/**
 * `npm run cluster` checks what it needs before it builds or starts anything, and says what is
 * missing in one line each, without a stack trace: here with no HAProxy on PATH, no PostgreSQL
 * at the database URL's server, and its port taken.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../../deploy/cluster.mjs';

const root = join(import.meta.dirname, '../../..');

test('npm run cluster: one line per missing prerequisite, no trace, nothing started', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  const closedPort = await freePort();
  try {
    const run = spawnSync(process.execPath, ['deploy/cluster.mjs', '--check'], {
      cwd: root,
      encoding: 'utf8',
      env: {
        PATH: dirname(process.execPath),
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/paygate_cluster`,
        CLUSTER_PORT: String(port),
      },
    });
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.deepEqual(run.stderr.trimEnd().split('\n'), [
      'npm run cluster: HAProxy is not installed (no haproxy on PATH): apt-get install haproxy',
      `npm run cluster: PostgreSQL at 127.0.0.1:${closedPort} does not answer (ECONNREFUSED): start it, or point DATABASE_URL at one`,
      `npm run cluster: port ${port} is in use (is npm start running?): stop it, or set CLUSTER_PORT`,
    ]);
  } finally {
    taken.close();
  }
});
