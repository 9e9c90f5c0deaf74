/**
 * Browser-test helpers: Debian's Chromium driven headless by playwright-core, the portal build,
 * and screenshots under packages/portal/test-results/ (gitignored).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

const AXE_SOURCE = join(PORTAL_DIR, '../../node_modules/axe-core/axe.min.js');

/**
 * Runs axe-core in the page against WCAG 2.0/2.1 A and AA (labels, names, roles, contrast…) and
 * returns the violations as `rule: target` lines; none is the expectation.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the pages' CSP (script-src 'self') rightly refuses
  // an injected <script>, and the audit must not need the policy loosened.
  await page.evaluate(`${readFileSync(AXE_SOURCE, 'utf8')}\n;0`);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<AxeResults> } })
      .axe;
    const results = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return violations;
}

interface AxeResults {
  violations: { id: string; nodes: { target: string[] }[] }[];
}
