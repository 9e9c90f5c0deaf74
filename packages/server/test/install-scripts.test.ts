/**
 * `npm ci` does not warn about install scripts (issue 39, point 5): every installed dependency
 * with an install script is allowed or denied by the root package.json's `allowScripts`, with its
 * reason in the README. A dependency that brings a new one fails here until it is reviewed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';

const ROOT = new URL('../../../', import.meta.url).pathname;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

it('allowScripts covers every installed dependency with an install script, each with its reason', (t) => {
  const version = spawnSync(npm, ['--version'], { cwd: ROOT, encoding: 'utf8' });
  const [major = 0, minor = 0] = version.stdout.trim().split('.').map(Number);
  if (version.status !== 0 || major < 11 || (major === 11 && minor < 19)) {
    t.skip(`npm ${version.stdout.trim()} has no install-scripts command (npm 11.19 or newer)`);
    return;
  }
  const listed = spawnSync(npm, ['install-scripts', 'ls'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(listed.status, 0, listed.stderr);
  assert.equal(listed.stdout.trim(), 'No packages with unreviewed install scripts.', listed.stdout);
  const { allowScripts } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
    allowScripts: Record<string, boolean>;
  };
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  for (const name of Object.keys(allowScripts))
    assert.ok(readme.includes(`\`${name}\` (`), `README gives ${name}'s reason`);
});
