#!/usr/bin/env node
// `npm run lint:openapi`: the served OpenAPI document (packages/server/openapi.json, which a test
// keeps equal to what /openapi.json serves) against Redocly CLI's `recommended` rules. Redocly
// fails only on errors; here a warning fails too, each printed as one line.
import { spawnSync } from 'node:child_process';

const DOCUMENT = 'packages/server/openapi.json';
const run = spawnSync('npx', ['redocly', 'lint', '--extends=recommended', '--format=json', DOCUMENT], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  console.error(`lint:openapi: Redocly CLI gave no report (exit ${run.status})\n${run.stdout}`);
  process.exit(1);
}
for (const problem of report.problems) {
  const where = problem.location?.map((l) => l.pointer).join(', ') ?? '';
  console.error(`${problem.severity} ${problem.ruleId}: ${problem.message} (${where})`);
}
const { errors, warnings } = report.totals;
console.log(
  `lint:openapi: ${DOCUMENT}: ${errors} errors, ${warnings} warnings (Redocly ${report.version}, recommended)`,
);
process.exit(errors + warnings === 0 && run.status === 0 ? 0 : 1);
