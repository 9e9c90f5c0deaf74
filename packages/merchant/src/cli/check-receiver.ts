import { z } from 'zod';
import { PaygateClient } from '../client.js';
import type { ReceiverCheckCase } from '../types.js';
import { CliError, type ConfigFlags, clientSettings } from './config.js';

const argsSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: 'URL is the http(s) address of your webhook receiver' }),
});

/**
 * How long the one API call may take: the platform sends up to 15 requests, each waiting at
 * most 5 s for its answer.
 */
const CHECK_TIMEOUT_MS = 120_000;

function table(results: readonly ReceiverCheckCase[]): string {
  const rows = results.map((r) => [
    r.name,
    r.expected === 'accept' ? 'accept (2xx)' : 'refuse (non-2xx)',
    r.observed.join(' then '),
    r.pass ? 'PASS' : 'FAIL',
  ]);
  const all = [['case', 'expected', 'observed', 'result'], ...rows];
  const widths = [0, 1, 2].map((i) => Math.max(...all.map((row) => (row[i] as string).length)));
  return all
    .map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i] as number) : cell)).join('  '))
    .join('\n');
}

/**
 * `check-receiver URL [--json]`: the sandbox platform fires correctly signed and tampered
 * webhooks at the merchant's receiver (`POST /api/v1/sandbox/webhooks/check`), the valid one
 * signed with its own webhook key as real deliveries are, and this prints, case by case, what
 * was expected and what the receiver answered. No extra key: a receiver configured from
 * onboarding passes unchanged. Resolves the exit code: 0 all pass, 1 otherwise.
 */
export async function checkReceiver(
  positionals: readonly string[],
  options: { json: boolean; flags: ConfigFlags },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const parsed = argsSchema.safeParse({ url: positionals[0] });
  if (!parsed.success || positionals.length !== 1) {
    const problems = parsed.success ? ['give exactly one URL'] : parsed.error.issues.map((i) => i.message);
    throw new CliError(`check-receiver URL: ${problems.join('; ')}`, 2);
  }
  const client = new PaygateClient(clientSettings(options.flags, env));
  // Not retried: a retry would fire every case again.
  const report = await client.sandbox.checkReceiver(
    { url: parsed.data.url },
    { timeoutMs: CHECK_TIMEOUT_MS, retries: 0 },
  );
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return report.passed ? 0 : 1;
  }
  const failed = report.cases.filter((r) => !r.pass);
  process.stdout.write(`signed by the platform with keyid ${report.keyid}, sent to ${report.url}\n`);
  process.stdout.write(`${table(report.cases)}\n`);
  process.stdout.write(
    report.passed
      ? `all ${report.cases.length} cases pass\n`
      : `${failed.length} of ${report.cases.length} cases FAIL\n`,
  );
  const valid = report.cases[0];
  if (valid?.name === 'valid' && !valid.pass) {
    process.stdout.write(
      `The valid webhook was not accepted${valid.answer ? ` (answer: ${valid.answer})` : ''}: does the receiver ` +
        `trust the webhook keys onboarding printed (keyid ${report.keyid}) and verify the raw body?\n`,
    );
  }
  return report.passed ? 0 : 1;
}
