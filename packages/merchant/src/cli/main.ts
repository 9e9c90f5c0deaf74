import { parseArgs } from 'node:util';
import { z } from 'zod';
import { checkReceiver } from './check-receiver.js';
import { CliError, DEFAULT_URL } from './config.js';
import { reportFailure, takeDebugFlag } from './failure.js';
import { keygen } from './keygen.js';
import { listen } from './listen.js';
import { request } from './request.js';
import { DEFAULT_TRIGGER_URL, TRIGGER_EVENTS, trigger } from './trigger.js';
import { verifyCaptured } from './verify.js';

const USAGE = `paygate-merchant: the Paygate merchant command line

  paygate-merchant keygen [--out DIR] [--force]
        writes DIR/private.pem (mode 0600) and DIR/public.pem (default DIR: .); prints the public
        key to upload (base64 of the raw 32 bytes) on stdout
  paygate-merchant request METHOD PATH [--json BODY|@FILE|-] [--verbose] [--retries N]
        one signed request (POST bodies sealed): a curl for this API. PATH may carry the query,
        e.g. GET '/api/v1/payments?orderNo=P…'. Prints the response body; --verbose shows what
        was sent and the signature base on stderr. Exit 0 on 2xx, 1 otherwise
  paygate-merchant verify-webhook --headers FILE --body FILE [--url URL] [--now UNIX_SECONDS]
        checks a captured webhook and says which check fails and why. FILE formats: "Name: value"
        lines (optionally after the request line, as listen --save writes them) or a JSON object
  paygate-merchant listen [--port N] [--host H] [--save DIR] [--https [--tls-dir DIR]]
        a local receiver (default 127.0.0.1:4000) that verifies and pretty-prints every webhook.
        --https (default port 4443): TLS with a self-signed certificate made once into DIR (default
        ./merchant-tls: cert.pem, key.pem), its SHA-256 fingerprint printed; a production platform
        trusts it with PAYGATE_WEBHOOK_EXTRA_CA=DIR/cert.pem
  paygate-merchant trigger EVENT [--webhook-url URL] [--json]
        sandbox: creates an order whose webhook goes to URL (default ${DEFAULT_TRIGGER_URL}) and
        drives it until EVENT is sent (payouts are confirmed first, and funded by a succeeded
        payment when the balance is short). EVENT: ${TRIGGER_EVENTS.slice(0, 4).join(', ')},
        ${TRIGGER_EVENTS.slice(4).join(', ')}
  paygate-merchant check-receiver URL [--json]
        sandbox: the platform fires correctly signed and tampered webhooks at your receiver (the
        valid one signed with its own webhook key, as deliveries are) and this reports, case by
        case, whether it accepted the good (2xx) and refused the bad; exit 1 when any case fails.
        Configure the receiver exactly as for real deliveries: no extra key

A mistake is one line on stderr and a non-zero exit; --debug (anywhere) adds the trace.

Configuration: each flag wins over its environment variable, which wins over the onboarding file.
  --url URL                  PAYGATE_URL              platform base URL (default ${DEFAULT_URL})
  --access-key AK            PAYGATE_ACCESS_KEY       ak_test_… or ak_live_…
  --private-key FILE         PAYGATE_PRIVATE_KEY      your Ed25519 private key (PEM from keygen)
  --body-key-id ID           PAYGATE_BODY_KEY_ID      platform body key id (bk_…)
  --body-public-key B64      PAYGATE_BODY_PUBLIC_KEY  platform body public key (base64, 32 bytes)
  --webhook-keys JSON|@FILE  PAYGATE_WEBHOOK_KEYS     [{"keyid":"wk_…","publicKey":"<base64>"}]
  --onboarding FILE          PAYGATE_ONBOARDING       the JSON \`paygate merchant create --json\`
                                                      printed: access key, body key, webhook keys`;

const STRING_OPTIONS = [
  'out',
  'json',
  'retries',
  'url',
  'headers',
  'body',
  'now',
  'port',
  'host',
  'save',
  'access-key',
  'private-key',
  'body-key-id',
  'body-public-key',
  'webhook-keys',
  'onboarding',
  'webhook-url',
  'tls-dir',
];

/** Binds `--name VALUE` into `--name=VALUE`, so that values starting with a dash (`-`, PEM) stay values. */
function bindValues(argv: readonly string[]): string[] {
  const bound: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    if (arg.startsWith('--') && STRING_OPTIONS.includes(arg.slice(2)) && next !== undefined) {
      bound.push(`${arg}=${next}`);
      i++;
    } else {
      bound.push(arg);
    }
  }
  return bound;
}

/** Commands where `--json` is a switch (print JSON) rather than request's `--json BODY`. */
const JSON_SWITCH_COMMANDS = ['trigger', 'check-receiver'];

/** For the commands whose `--json` is a switch, renames it `--json-output` so it takes no value. */
function jsonSwitch(argv: readonly string[]): string[] {
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.startsWith('--')) {
      if (STRING_OPTIONS.includes(arg.slice(2))) i++;
      continue;
    }
    command = arg;
    break;
  }
  if (!command || !JSON_SWITCH_COMMANDS.includes(command)) return [...argv];
  return argv.map((arg) => (arg === '--json' ? '--json-output' : arg));
}

const listenSchema = z.object({
  port: z.coerce.number().int().min(0).max(65535, 'a port from 0 to 65535'),
  host: z.string().min(1),
});

/** Runs one command; resolves the exit code. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseArgs({
    args: bindValues(jsonSwitch(argv)),
    allowPositionals: true,
    options: {
      ...Object.fromEntries(STRING_OPTIONS.map((name) => [name, { type: 'string' as const }])),
      force: { type: 'boolean', default: false },
      https: { type: 'boolean', default: false },
      verbose: { type: 'boolean', short: 'v', default: false },
      'json-output': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const text = (name: string) => {
    const value = (values as Record<string, string | boolean | undefined>)[name];
    return typeof value === 'string' ? value : undefined;
  };
  const flags = {
    url: text('url'),
    'access-key': text('access-key'),
    'private-key': text('private-key'),
    'body-key-id': text('body-key-id'),
    'body-public-key': text('body-public-key'),
    'webhook-keys': text('webhook-keys'),
    onboarding: text('onboarding'),
  };
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  switch (command) {
    case 'keygen':
      keygen(text('out') ?? '.', values.force === true);
      return 0;
    case 'request':
      return request(
        rest,
        { json: text('json'), verbose: values.verbose === true, retries: text('retries'), flags },
        env,
      );
    case 'verify-webhook':
      return verifyCaptured(
        { url: text('url'), headers: text('headers'), body: text('body'), now: text('now'), flags },
        env,
      );
    case 'trigger':
      return trigger(rest, { webhookUrl: text('webhook-url'), json: values['json-output'] === true, flags }, env);
    case 'check-receiver':
      return checkReceiver(rest, { json: values['json-output'] === true, flags }, env);
    case 'listen': {
      const https = values.https === true;
      const parsed = listenSchema.safeParse({
        port: text('port') ?? (https ? 4443 : 4000),
        host: text('host') ?? '127.0.0.1',
      });
      if (!parsed.success) throw new CliError(`listen: ${parsed.error.issues.map((i) => i.message).join('; ')}`, 2);
      await listen({ ...parsed.data, save: text('save'), https, tlsDir: text('tls-dir'), flags }, env);
      return -1;
    }
    default:
      throw new CliError(`unknown command: ${command}; paygate-merchant --help lists the commands`, 2);
  }
}

const { argv, debug } = takeDebugFlag(process.argv.slice(2));
run(argv).then(
  (code) => {
    // -1: a server that keeps running.
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportFailure(error, debug);
  },
);
