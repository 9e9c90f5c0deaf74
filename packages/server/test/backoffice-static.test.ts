/**
 * The back office's web app served at /backoffice (issue 45): its build's page for every app path
 * (the setup link's `/backoffice/setup` included), its assets, the portal's headers and policy,
 * nothing outside the build, its API's paths never a page, and a page saying how to build it
 * when there is no build (the API still answering).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../src/app.js';
import { startTestPlatform, type TestPlatform } from './harness.js';

describe('back office web app serving', () => {
  let platform: TestPlatform;
  let dir: string;
  before(async () => {
    platform = await startTestPlatform();
    dir = mkdtempSync(join(tmpdir(), 'paygate-backoffice-dist-'));
  });
  after(async () => {
    await platform.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('explains how to build the back office when there is no build, and its API still answers', async () => {
    const app = await buildApp(platform.services, { backofficeDir: join(dir, 'missing') });
    const page = await app.inject({ method: 'GET', url: '/backoffice/setup' });
    assert.equal(page.statusCode, 503);
    assert.match(page.body, /back office has not been built/);
    assert.match(page.body, /npm run build/);
    const api = await app.inject({ method: 'GET', url: '/backoffice/api/session' });
    assert.equal(api.statusCode, 401);
    await app.close();
  });

  it("serves its page for app paths with the portal's policy, its assets, and nothing outside the build", async () => {
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'backoffice.html'), '<!doctype html><title>back office</title>');
    writeFileSync(join(dir, 'assets', 'backoffice-1234.js'), 'console.log(1)');
    const app = await buildApp(platform.services, { backofficeDir: dir });
    try {
      const redirect = await app.inject({ method: 'GET', url: '/backoffice' });
      assert.equal(redirect.statusCode, 302);
      assert.equal(redirect.headers.location, '/backoffice/');
      const index = await app.inject({ method: 'GET', url: '/backoffice/' });
      assert.equal(index.statusCode, 200);
      assert.equal(index.body, '<!doctype html><title>back office</title>');
      assert.match(index.headers['content-security-policy'] as string, /default-src 'self'/);
      assert.match(index.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
      assert.equal(index.headers['x-frame-options'], 'DENY');
      assert.equal(index.headers['referrer-policy'], 'no-referrer');
      assert.equal(index.headers['cache-control'], 'no-cache');
      for (const url of ['/backoffice/setup', '/backoffice/orders/P202601010000000001', '/backoffice/search?q=x']) {
        const page = await app.inject({ method: 'GET', url });
        assert.equal(page.statusCode, 200, url);
        assert.equal(page.body, index.body, url);
      }
      const asset = await app.inject({ method: 'GET', url: '/backoffice/assets/backoffice-1234.js' });
      assert.equal(asset.statusCode, 200);
      assert.match(asset.headers['content-type'] as string, /^text\/javascript/);
      assert.match(asset.headers['cache-control'] as string, /immutable/);
      assert.equal((await app.inject({ method: 'GET', url: '/backoffice/assets/missing.js' })).statusCode, 404);
      assert.equal((await app.inject({ method: 'GET', url: '/backoffice/api/no-such-route' })).statusCode, 404);
      for (const url of ['/backoffice/..%2f..%2fpackage.json', '/backoffice/%2e%2e/%2e%2e/package.json']) {
        const response = await app.inject({ method: 'GET', url });
        assert.ok([400, 404].includes(response.statusCode), `${url}: ${response.statusCode}`);
        assert.doesNotMatch(response.body, /"workspaces"|"name": "@paygate/);
      }
      // The portal keeps its own build: its page is not the back office's.
      const portal = await app.inject({ method: 'GET', url: '/portal/' });
      assert.notEqual(portal.body, index.body);
    } finally {
      await app.close();
    }
  });
});
