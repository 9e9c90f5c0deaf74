/**
 * Browser-test helpers: those of chromium.ts, and the in-page accessibility audit (axe-core).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PORTAL_DIR } from './chromium.js';

export * from './chromium.js';

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
