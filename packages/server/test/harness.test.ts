/**
 * The test harness's "500 means our fault" rule: a platform whose log holds an error-level line
 * fails its `close()`, unless the test opted in with `expectErrorLogs`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestPlatform } from './harness.js';

describe('test harness: error-level logs', () => {
  it('close() fails when the platform logged an error-level line', async () => {
    const platform = await startTestPlatform();
    platform.app.log.warn('a warning is not a fault');
    assert.deepEqual(platform.errorLogs(), []);
    platform.app.log.error({ probe: 1 }, 'deliberate fault');
    assert.equal(platform.errorLogs().length, 1);
    assert.equal(platform.errorLogs()[0]?.msg, 'deliberate fault');
    await assert.rejects(platform.close(), /logged 1 error-level line\(s\).*deliberate fault/s);
  });

  it('close() passes when the test expects error logs', async () => {
    // Opted in: this test logs an error on purpose.
    const platform = await startTestPlatform({ expectErrorLogs: true });
    platform.app.log.fatal('deliberate fault');
    assert.equal(platform.errorLogs().length, 1);
    await platform.close();
  });

  it('a request the platform answers normally logs nothing at error level', async () => {
    const platform = await startTestPlatform();
    const response = await fetch(`${platform.url}/api/v1/payments`, { method: 'POST', body: '{' });
    assert.equal(response.status, 401);
    await platform.close();
  });
});
