/**
 * The deploy/ files as an operator installs them: systemd-analyze verify accepts the units (as
 * instances of the templates) and HAProxy accepts its configuration.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';

const deploy = new URL('../../../../deploy/', import.meta.url).pathname;

describe('deploy/ files', () => {
  it(
    'systemd-analyze verify accepts every unit',
    { skip: !existsSync('/usr/bin/systemd-analyze') && 'no systemd-analyze' },
    () => {
      const units = [
        'paygate-migrate.service',
        'paygate-api@8081.service',
        'paygate-worker@1.service',
        'paygate.target',
      ];
      const result = spawnSync(
        '/usr/bin/systemd-analyze',
        ['verify', '--man=no', ...units.map((unit) => `./${unit}`)],
        {
          cwd: `${deploy}systemd`,
          encoding: 'utf8',
        },
      );
      // verify also warns (unknown keys, missing executables) with status 0: no output is allowed.
      assert.equal(result.status, 0, result.stderr);
      assert.equal(`${result.stdout}${result.stderr}`.trim(), '');
    },
  );

  it(
    'haproxy -c accepts deploy/haproxy/haproxy.cfg',
    { skip: spawnSync('haproxy', ['-v']).status !== 0 && 'no haproxy' },
    () => {
      const result = spawnSync('haproxy', ['-c', '-q', '-f', `${deploy}haproxy/haproxy.cfg`], {
        encoding: 'utf8',
        env: {
          ...process.env,
          PAYGATE_LB_BIND: '127.0.0.1:8080',
          PAYGATE_LB_STATS: '127.0.0.1:8404',
          PAYGATE_API_1: '127.0.0.1:8081',
          PAYGATE_API_2: '127.0.0.1:8082',
          PAYGATE_LB_ERRORS: `${deploy}haproxy/errors`,
        },
      });
      assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
    },
  );
});
