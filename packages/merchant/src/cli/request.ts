import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type ApiRequest, PaygateClient } from '../client.js';
import { splitTarget } from '../webhook.js';
import { CliError, type ConfigFlags, clientSettings } from './config.js';

const argsSchema = z.object({
  method: z.enum(['GET', 'POST'], { error: 'METHOD is GET or POST (the API has no other methods)' }),
  path: z.string().regex(/^\/[^\s#]*$/, 'PATH starts with / and has no spaces, e.g. /api/v1/payments?orderNo=P…'),
  retries: z.coerce.number().int().min(0).max(10),
});

function readBody(json: string | undefined): unknown {
  if (json === undefined) throw new CliError('a POST needs a body: --json \'{"…": …}\' (or @FILE, or - for stdin)', 2);
  let text = json;
  if (json === '-' || json.startsWith('@')) {
    const file = json === '-' ? 'stdin' : json.slice(1);
    try {
      text = readFileSync(json === '-' ? 0 : file, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read the --json body from ${file}: ${(error as Error).message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`--json is not valid JSON: ${(error as Error).message}`, 2);
  }
}

/**
 * `request METHOD PATH [--json BODY]`: one signed (and, for POST, sealed) request; prints the
 * response body on stdout, and with `verbose` what was sent, the signature base and the
 * response status on stderr. Resolves the exit code: 0 for a 2xx answer, 1 otherwise.
 */
export async function request(
  positionals: readonly string[],
  options: { json?: string | undefined; verbose: boolean; retries?: string | undefined; flags: ConfigFlags },
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const parsed = argsSchema.safeParse({
    method: positionals[0]?.toUpperCase(),
    path: positionals[1],
    retries: options.retries ?? 0,
  });
  if (!parsed.success || positionals.length !== 2) {
    const problems = parsed.success ? ['give exactly METHOD and PATH'] : parsed.error.issues.map((i) => i.message);
    throw new CliError(`request METHOD PATH [--json BODY]: ${problems.join('; ')}`, 2);
  }
  const { method, path, retries } = parsed.data;
  const target = splitTarget(path);
  let apiRequest: ApiRequest;
  if (method === 'GET') {
    if (options.json !== undefined) throw new CliError('a GET request has no body: drop --json', 2);
    apiRequest = { method, path: target.path, ...(target.query !== undefined ? { query: target.query } : {}) };
  } else {
    if (target.query !== undefined) throw new CliError('a POST request has no query string', 2);
    apiRequest = { method, path: target.path, body: readBody(options.json) };
  }
  const client = new PaygateClient({ ...clientSettings(options.flags, env), retries });
  const response = await client.send(apiRequest);
  if (options.verbose) {
    const lines = [`> ${method} ${response.sent.url}`];
    for (const [name, value] of Object.entries(response.sent.headers)) lines.push(`> ${name}: ${value}`);
    lines.push('>', '> signature base (what was signed):');
    for (const line of response.sent.signatureBase.split('\n')) lines.push(`>   ${line}`);
    lines.push(`< ${response.status}${response.requestId ? ` (Request-Id ${response.requestId})` : ''}`);
    if (response.attempts > 1) lines.push(`< after ${response.attempts} attempts`);
    process.stderr.write(`${lines.join('\n')}\n`);
  }
  const body = typeof response.body === 'string' ? response.body : JSON.stringify(response.body, null, 2);
  process.stdout.write(`${body}\n`);
  if (response.status === 401 && !options.verbose) {
    process.stderr.write(
      'UNAUTHORIZED: the platform does not say which check failed. Check the private key, access key and body key ' +
        'against onboarding, and this machine’s clock; --verbose shows the signature base that was signed' +
        (response.requestId ? `; the sandbox portal shows the reason under Request-Id ${response.requestId}` : '') +
        '.\n',
    );
  }
  return response.status >= 200 && response.status < 300 ? 0 : 1;
}
