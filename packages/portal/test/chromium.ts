/**
 * Browser-test helpers that need no DOM types (the server's tests use them too): Debian's
 * Chromium driven headless by playwright-core, the portal build, and screenshots under
 * packages/portal/test-results/ (gitignored). browser.ts adds the in-page audits.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const PORTAL_DIR = new URL('..', import.meta.url).pathname;
export const RESULTS_DIR = join(PORTAL_DIR, 'test-results');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * The `skip` option of every browser suite: a message when PAYGATE_SKIP_BROWSER=1 (for machines
 * without Chromium), false otherwise. Without it a missing browser fails loudly (launchChromium).
 */
export const SKIP_BROWSER: string | false =
  process.env.PAYGATE_SKIP_BROWSER === '1' ? 'PAYGATE_SKIP_BROWSER=1: the browser (Chromium) tests are skipped' : false;

/** Launches Chromium; a missing browser fails the suite loudly (it never passes by skipping). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the portal browser tests need it ` +
        '(apt-get install -y chromium, or set CHROMIUM_PATH). .ci/run installs it.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = statSync(path);
    newest = Math.max(newest, stat.isDirectory() ? newestSource(path) : stat.mtimeMs);
  }
  return newest;
}

/** Builds the portal (vite build) unless dist/ is newer than every source file. */
export function ensurePortalBuilt(): void {
  const index = join(PORTAL_DIR, 'dist', 'index.html');
  const sources = Math.max(
    newestSource(join(PORTAL_DIR, 'src')),
    statSync(join(PORTAL_DIR, 'index.html')).mtimeMs,
    statSync(join(PORTAL_DIR, 'vite.config.ts')).mtimeMs,
  );
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const result = spawnSync(process.execPath, [join(PORTAL_DIR, '../../node_modules/vite/bin/vite.js'), 'build'], {
    cwd: PORTAL_DIR,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (result.status !== 0) throw new Error(`vite build failed:\n${result.stdout}\n${result.stderr}`);
}

/** Saves a full-page screenshot as test-results/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Text content of a locator, trimmed, whitespace collapsed. */
export async function textOf(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * Builds the back office (vite build -c vite.backoffice.config.ts) unless dist-backoffice/ is
 * newer than every source file (it shares the portal's src/).
 */
export function ensureBackofficeBuilt(): void {
  const index = join(PORTAL_DIR, 'dist-backoffice', 'backoffice.html');
  const sources = Math.max(
    newestSource(join(PORTAL_DIR, 'src')),
    statSync(join(PORTAL_DIR, 'backoffice.html')).mtimeMs,
    statSync(join(PORTAL_DIR, 'vite.backoffice.config.ts')).mtimeMs,
  );
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = join(PORTAL_DIR, '../../node_modules/vite/bin/vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '-c', 'vite.backoffice.config.ts'], {
    cwd: PORTAL_DIR,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (result.status !== 0) throw new Error(`vite build (back office) failed:\n${result.stdout}\n${result.stderr}`);
}
