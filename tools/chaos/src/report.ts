/**
 * The campaign's figures: faults by kind with the requests and orders under them and the time to
 * recover (median, worst), the load's totals, and every rule's result; as text for the terminal
 * and as JSON (`report.json`) for docs/reliability.md.
 */
import type { RuleResult } from './checker.js';
import type { DbState } from './checker.js';
import type { History } from './history.js';

export interface FaultKindFigures {
  readonly kind: string;
  readonly count: number;
  readonly recovered: number;
  readonly recoverMedianMs: number | null;
  readonly recoverWorstMs: number | null;
  /** Requests sent between a fault's start and its recovery. */
  readonly requests: number;
  /** Of those, answered 5xx or not at all. */
  readonly failed: number;
  /** Orders whose create was sent in those windows. */
  readonly orders: number;
}

export interface Report {
  readonly seed: number;
  readonly minutes: number;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly commit: string;
  readonly machine: string;
  readonly faults: FaultKindFigures[];
  readonly totals: Record<string, number>;
  readonly ordersByStatus: Record<string, number>;
  readonly requestsByStatus: Record<string, number>;
  readonly rules: RuleResult[];
  readonly holds: boolean;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : Math.round(((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2);
}

export function faultFigures(history: History): FaultKindFigures[] {
  const kinds = [...new Set(history.faults.map((f) => f.kind))].sort();
  return kinds.map((kind) => {
    const faults = history.faults.filter((f) => f.kind === kind);
    const recoveries = faults
      .filter((f) => f.recoveredAt && f.healedAt)
      .map((f) => (f.recoveredAt as number) - (f.healedAt as number));
    const windows = faults.map((f) => [f.startedAt, f.recoveredAt ?? f.healedAt ?? f.startedAt] as const);
    const inWindow = (at: number) => windows.some(([from, to]) => at >= from && at <= to);
    const requests = history.attempts.filter((a) => inWindow(a.sentAt));
    const creates = history.attempts.filter(
      (a) =>
        inWindow(a.sentAt) && a.method === 'POST' && (a.path === '/api/v1/payments' || a.path === '/api/v1/payouts'),
    );
    return {
      kind,
      count: faults.length,
      recovered: recoveries.length,
      recoverMedianMs: median(recoveries),
      recoverWorstMs: recoveries.length ? Math.max(...recoveries) : null,
      requests: requests.length,
      failed: requests.filter((a) => a.status === 0 || a.status >= 500).length,
      orders: creates.filter((a) => a.status === 200).length,
    };
  });
}

export function buildReport(options: {
  seed: number;
  minutes: number;
  commit: string;
  machine: string;
  history: History;
  db: DbState;
  rules: RuleResult[];
  totals: Record<string, number>;
}): Report {
  const ordersByStatus: Record<string, number> = {};
  for (const order of options.db.orders) {
    const key = `${order.type} ${order.status}`;
    ordersByStatus[key] = (ordersByStatus[key] ?? 0) + 1;
  }
  const requestsByStatus: Record<string, number> = {};
  for (const attempt of options.history.attempts) {
    const key = attempt.status === 0 ? `no answer (${attempt.error})` : String(attempt.status);
    requestsByStatus[key] = (requestsByStatus[key] ?? 0) + 1;
  }
  return {
    seed: options.seed,
    minutes: options.minutes,
    startedAt: new Date(options.history.startedAt).toISOString(),
    endedAt: new Date().toISOString(),
    commit: options.commit,
    machine: options.machine,
    faults: faultFigures(options.history),
    totals: options.totals,
    ordersByStatus,
    requestsByStatus,
    rules: options.rules,
    holds: options.rules.every((rule) => rule.violations === 0),
  };
}

const seconds = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);

export function formatReport(report: Report): string {
  const lines: string[] = [];
  lines.push(`chaos campaign: seed ${report.seed}, ${report.minutes} min, commit ${report.commit}`);
  lines.push(`  ${report.startedAt} .. ${report.endedAt} on ${report.machine}`);
  lines.push('');
  lines.push('faults by kind            n  recovered  recover median  worst    requests  failed  orders');
  for (const f of report.faults) {
    lines.push(
      `  ${f.kind.padEnd(22)} ${String(f.count).padStart(3)} ${String(f.recovered).padStart(10)} ${seconds(f.recoverMedianMs).padStart(15)} ${seconds(f.recoverWorstMs).padStart(7)} ${String(f.requests).padStart(10)} ${String(f.failed).padStart(7)} ${String(f.orders).padStart(7)}`,
    );
  }
  lines.push('');
  lines.push(
    `totals: ${Object.entries(report.totals)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  lines.push(
    `orders: ${Object.entries(report.ordersByStatus)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  lines.push(
    `requests: ${Object.entries(report.requestsByStatus)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  lines.push('');
  lines.push('rules');
  for (const rule of report.rules) {
    const figures = rule.figures
      ? ` (${Object.entries(rule.figures)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')})`
      : '';
    lines.push(
      `  ${rule.violations === 0 ? 'HOLDS' : 'BROKEN'}  ${rule.rule}: ${rule.checked} checked, ${rule.violations} violations${figures}`,
    );
    for (const example of rule.examples) lines.push(`          ${example}`);
  }
  lines.push('');
  lines.push(report.holds ? 'every rule holds' : 'SOME RULES ARE BROKEN');
  return lines.join('\n');
}

/** The figures as Markdown tables (docs/reliability.md takes them from a report.json). */
export function formatMarkdown(report: Report): string {
  const lines: string[] = [];
  lines.push(
    '| fault kind | injected | recovered | time to recover, median | worst | requests under it | of them failed | orders created under it |',
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const f of report.faults) {
    lines.push(
      `| \`${f.kind}\` | ${f.count} | ${f.recovered} | ${seconds(f.recoverMedianMs)} | ${seconds(f.recoverWorstMs)} | ${f.requests} | ${f.failed} | ${f.orders} |`,
    );
  }
  lines.push('');
  lines.push('| rule | checked | violations | figures |');
  lines.push('| --- | ---: | ---: | --- |');
  for (const rule of report.rules) {
    const figures = rule.figures
      ? Object.entries(rule.figures)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')
      : '';
    lines.push(`| ${rule.rule} | ${rule.checked} | ${rule.violations} | ${figures} |`);
  }
  lines.push('');
  lines.push(
    `Totals: ${Object.entries(report.totals)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
  );
  lines.push('');
  lines.push(
    `Orders at the end: ${Object.entries(report.ordersByStatus)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
  );
  lines.push('');
  lines.push(
    `Requests by answer: ${Object.entries(report.requestsByStatus)
      .sort()
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}.`,
  );
  return lines.join('\n');
}
