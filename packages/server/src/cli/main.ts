import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseConfig } from '../config.js';
import { adminToken, adminTokenSource, readServerInfo, type ServerInfo } from '../local-state.js';
import { CliError, reportFailure, takeDebugFlag } from './failure.js';

const USAGE = `paygate: the Paygate operator command line (talks to the running server)

  paygate merchant create --name NAME --public-key KEY [--json]
        KEY: base64 of the raw 32-byte Ed25519 public key, a PEM SubjectPublicKeyInfo, or @FILE
  paygate merchant list [--json]
  paygate merchant keys --access-key AK [--json]
  paygate merchant add-key --access-key AK --public-key KEY [--json]
  paygate merchant retire-key --access-key AK --key KEY_ID_OR_BASE64 [--json]
  paygate merchant disable|enable --access-key AK [--json]   refuse (or again accept) the merchant's requests
  paygate keys list [--json]                          platform body and webhook keys
  paygate keys rotate --kind body|webhook [--json]    new active key; the old one stays enabled
  paygate keys retire --key-id ID [--json]            stop accepting / publishing an enabled key
  paygate master-key generate                         print a new random master key (base64; nothing is changed)
  paygate master-key status [--json]                  the master keys the platform keys are sealed under
  paygate master-key reseal [--json]                  re-seal every platform key under the server's PAYGATE_MASTER_KEY
        and retire every other master key (docs/operations.md, "Master key")
  paygate events resend --event-id EVT [--json]       deliver a webhook event again (same id and body, fresh signature)
  paygate worker                                      run the webhook dispatcher as its own process (needs DATABASE_URL)
  paygate migrate [--json]                            apply the database migrations this build has, then exit
  paygate backup --out FILE [--json]                  an online backup of the running server's embedded database
        (consistent: every transaction committed before it; gzip tar, mode 0600; never overwrites FILE)
  paygate restore --from FILE [--replace] [--json]    put a backup in place as PAYGATE_DATA_DIR's embedded database,
        with the server stopped (refused while the directory is in use; a database already there
        is refused, or with --replace kept as pgdata.replaced-<time>)
  paygate reconcile --channel NAME --file FILE.csv [--date YYYY-MM-DD] [--json]
        compare a channel's daily settlement file with the books, for --date, else the date in the
        file's name, else the day a camt.054's entries are booked on; reads the database itself, or
        while the server runs on the embedded database sends the file to the running server;
        exit 0 when clean, 1 when an order is missing on either side or its amount or status differs;
        for a sepa-sftp channel the file may be the bank's camt.054 (XML): its booked entries
  paygate reconcile --channel NAME --date YYYY-MM-DD [--json]
        the same against the channel's own list of that day's received payments (kind pix-api:
        GET /pix; needs PAYGATE_CHANNELS)
  paygate user invite --access-key AK --email E [--role owner|developer|finance|viewer] [--json]
        prints a one-time portal setup link (valid 72 h) where the user sets a password; a new user
        is an owner unless --role says otherwise; for an existing user it works as a password reset
        (the old password works until the link is used) and --role, when given, changes the role
  paygate user list --access-key AK [--json]          the merchant's portal users and their roles
  paygate operator invite --email E --role admin|support|finance|auditor [--json]
        prints a one-time back-office setup link (valid 72 h) where the operator sets a password (a
        second factor follows at first sign-in); for an existing operator it works as a password
        reset and --role, when given, changes the role (the last admin is never demoted)
  paygate operator list [--json]                      the back office's operators, their roles and second factor
  paygate operator remove --email E [--json]          remove an operator and end their sessions (not the last admin)
  paygate audit list [--access-key AK] [--json]       the audit trail (one merchant's with --access-key), oldest first
  paygate audit verify [--json]                       walk the audit trail's hash chain: exit 0 printing the
        number of entries checked, or 1 naming the first entry that breaks it
  paygate channels notifications --channel NAME [--json]
        the channel's newest 100 notifications as received (event id, order, outcome; --json adds the
        raw body and authentication headers), newest first
  paygate channels files [--channel NAME] [--json]
        the files the sepa-sftp channels sent (MsgId, payouts, state built/uploaded/acknowledged, the
        bank's statuses of the file and its block, intermediate ones included) and received (state
        applied/set aside, with the reason), and the batch bookings read (applied, or a mismatch:
        nothing applied), newest first
  paygate channels credits [--channel NAME] [--all] [--json]
        the credit transfers received on a sepa-sftp channel's account that matched no payment by
        bank transfer (--all: the matched ones too), with the reason, amount, reference and payer
  paygate channels health [--channel NAME] [--json]
        each channel; for sepa-sftp its open batch and when it closes, the bank's next cut-off,
        files waiting to go or for an answer, the last file read, unmatched credits and batches
  paygate channels sync --order-no ORDER_NO [--json]
        asks the order's channel about it now and applies the answer as polling does (e.g. a payout
        returned after polling stopped asking, 7 days after it succeeded); prints the channel's
        answer and the order's status before and after; a return is credited once

The server is found through PAYGATE_URL, or <PAYGATE_DATA_DIR>/server.json written at start-up,
or http://HOST:PORT; the token through PAYGATE_ADMIN_TOKEN or <PAYGATE_DATA_DIR>/admin.token.
Times are printed in ISO 8601 (UTC); with --json as the operator API gives them (milliseconds).
A mistake is one line on stderr and a non-zero exit; --debug (anywhere) adds the trace.`;

function readKey(value: string): string {
  if (!value.startsWith('@')) return value;
  try {
    return readFileSync(value.slice(1), 'utf8');
  } catch (error) {
    throw new CliError(`cannot read the public key file ${value.slice(1)}: ${(error as Error).message}`, 1, {
      cause: error,
    });
  }
}

interface Operator {
  /** Where the server is and the token the command presents. */
  readonly target: { readonly url: string; readonly token: string };
  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  /** The line a refused request becomes. */
  refusal(response: Response): Promise<CliError>;
}

function operator(env: NodeJS.ProcessEnv): Operator {
  // The operator API is the same in both environments: the command needs only where the server
  // and its token are, not what production requires of a server (its master key, its database).
  const config = parseConfig({ ...env, PAYGATE_ENV: env.PAYGATE_ENV === 'production' ? undefined : env.PAYGATE_ENV });
  const local = readServerInfo(config);
  const url = env.PAYGATE_URL ?? local?.url ?? `http://${config.host}:${config.port}`;
  const token = adminToken(config);
  const refusal = async (response: Response): Promise<CliError> => {
    const payload = (await response.json().catch(() => ({}))) as {
      msg?: string;
      message?: string;
      errors?: unknown;
    };
    if (response.status === 401) return new CliError(unauthorized(url, response, config, local));
    const detail = payload.errors ? ` ${JSON.stringify(payload.errors)}` : '';
    return new CliError(`${payload.msg ?? response.status}: ${payload.message ?? 'request failed'}${detail}`);
  };
  return {
    target: { url, token },
    refusal,
    async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      let response: Response;
      try {
        response = await fetch(`${url.replace(/\/$/, '')}/admin/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (error) {
        throw new CliError(`cannot reach the Paygate server at ${url}: is it running (npm start)?`, 1, {
          cause: error,
        });
      }
      if (!response.ok) throw await refusal(response);
      const payload = (await response.json().catch(() => ({}))) as { msg?: string; data?: T };
      if (payload.msg !== 'SUCCESS') throw new CliError(`${payload.msg ?? response.status}: request failed`);
      return payload.data as T;
    },
  };
}

/**
 * Why the server refused the operator token, as far as the command can tell: the server that
 * answered names itself (`Paygate-Server-Id`), and the data directory the token came from names
 * the server that wrote it (`server.json`); when they differ, PAYGATE_URL and the token belong to
 * different servers.
 */
function unauthorized(
  url: string,
  response: Response,
  config: ReturnType<typeof parseConfig>,
  local: ServerInfo | undefined,
): string {
  const source = adminTokenSource(config);
  const answered = response.headers.get('paygate-server-id');
  if (!config.adminToken && local?.serverId && answered && answered !== local.serverId) {
    return (
      `UNAUTHORIZED: ${url} is another server than the one whose operator token is in ${source} ` +
      `(that one ran at ${local.url}, pid ${local.pid}): point PAYGATE_DATA_DIR at the data directory of the ` +
      `server at ${url}, or PAYGATE_URL at ${local.url}, or set PAYGATE_ADMIN_TOKEN to that server's token`
    );
  }
  const hint = config.adminToken
    ? 'is it the PAYGATE_ADMIN_TOKEN that server was started with?'
    : local
      ? `is it the token that server was started with (PAYGATE_ADMIN_TOKEN)?`
      : `no server has run from ${config.dataDir}: is PAYGATE_DATA_DIR the data directory of the server at ${url}?`;
  return `UNAUTHORIZED: the server at ${url} refused the operator token from ${source}; ${hint}`;
}

/** Times as ISO 8601 for people: every `…At` member holding milliseconds, at any depth. */
function readableTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(readableTimes);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => [
      name,
      name.endsWith('At') && typeof member === 'number' ? new Date(member).toISOString() : readableTimes(member),
    ]),
  );
}

function print(value: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  const readable = readableTimes(value);
  if (Array.isArray(readable)) console.table(readable);
  else process.stdout.write(`${JSON.stringify(readable, null, 2)}\n`);
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '')
    throw new CliError(`--${name} is required; paygate --help shows the usage`, 2);
  return value;
}

const STRING_OPTIONS = [
  'name',
  'public-key',
  'access-key',
  'key',
  'key-id',
  'kind',
  'event-id',
  'email',
  'channel',
  'order-no',
  'file',
  'date',
  'out',
  'from',

  'role',
];

/**
 * Binds each string option to the argument after it (`--public-key X` → `--public-key=X`), so
 * that a PEM key, which starts with dashes, is taken as a value and not as an option.
 */
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

export async function run(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { values, positionals } = parseArgs({
    args: bindValues(argv),
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'public-key': { type: 'string' },
      'access-key': { type: 'string' },
      key: { type: 'string' },
      'key-id': { type: 'string' },
      'event-id': { type: 'string' },
      kind: { type: 'string' },
      email: { type: 'string' },
      channel: { type: 'string' },
      'order-no': { type: 'string' },
      file: { type: 'string' },
      date: { type: 'string' },
      out: { type: 'string' },
      from: { type: 'string' },
      replace: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },

      role: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [group, command] = positionals;
  const json = values.json === true;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (group === 'worker') {
    // The dispatcher as its own process: it talks to the database, not to a server.
    const { runWorker } = await import('../worker/main.js');
    return runWorker(env);
  }
  if (group === 'migrate') {
    // Migrations as their own deployment step: instances started with PAYGATE_AUTO_MIGRATE=false
    // wait for it, and refuse a schema newer than they know.
    const { runMigrate } = await import('./migrate.js');
    return runMigrate(env, (line) => process.stdout.write(`${line}\n`), json);
  }
  if (group === 'reconcile') {
    const { runReconcile } = await import('./reconcile.js');
    const clean = await runReconcile(
      env,
      { channel: required(values, 'channel'), file: values.file, date: values.date, json },
      (line) => process.stdout.write(`${line}\n`),
      (request) => operator(env).call('POST', '/reconciliation', request),
    );
    if (!clean) process.exitCode = 1;
    return;
  }
  if (group === 'restore') {
    // Direct to the data directory, for a stopped server (it takes the directory's lock).
    const { runRestore } = await import('./restore.js');
    const report = await runRestore(env, required(values, 'from'), values.replace === true);
    if (json) return print(report, true);
    const lines = [
      `restored ${values.from} into ${report.dataDir} (${report.migrations} migrations applied in it)`,
      ...(report.replaced ? [`the database that was there is kept in ${report.replaced}`] : []),
      ...(report.pending.length > 0
        ? [`the next start applies ${report.pending.length} newer migration(s): ${report.pending.join(', ')}`]
        : []),
      "start the server with the master key of the backed-up server (PAYGATE_MASTER_KEY or PAYGATE_MASTER_KEY_FILE; in the sandbox, its data directory's master.key copied here)",
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  if (group === 'master-key' && command === 'generate') {
    // Offline: a key for the operator to store; the server learns it only from PAYGATE_MASTER_KEY.
    const { generateMasterKey } = await import('../crypto/master-key.js');
    process.stdout.write(`${generateMasterKey()}\n`);
    return;
  }
  const api = operator(env);
  const key = (name: string) => encodeURIComponent(required(values, name));
  switch (`${group} ${command ?? ''}`.trim()) {
    case 'merchant create':
      return print(
        await api.call('POST', '/merchants', {
          name: required(values, 'name'),
          publicKey: readKey(required(values, 'public-key')),
        }),
        json,
      );
    case 'merchant list':
      return print(await api.call('GET', '/merchants'), json);
    case 'merchant keys':
      return print(await api.call('GET', `/merchants/${key('access-key')}/keys`), json);
    case 'merchant add-key':
      return print(
        await api.call('POST', `/merchants/${key('access-key')}/keys`, {
          publicKey: readKey(required(values, 'public-key')),
        }),
        json,
      );
    case 'merchant disable':
      return print(await api.call('POST', `/merchants/${key('access-key')}/disable`), json);
    case 'merchant enable':
      return print(await api.call('POST', `/merchants/${key('access-key')}/enable`), json);
    case 'merchant retire-key':
      return print(
        await api.call('POST', `/merchants/${key('access-key')}/keys/retire`, { key: required(values, 'key') }),
        json,
      );
    case 'keys list':
      return print(await api.call('GET', '/platform-keys'), json);
    case 'keys rotate':
      return print(await api.call('POST', '/platform-keys/rotate', { kind: required(values, 'kind') }), json);
    case 'master-key status':
      return print(await api.call('GET', '/master-key'), json);
    case 'master-key reseal':
      return print(await api.call('POST', '/master-key/reseal'), json);
    case 'events resend':
      return print(await api.call('POST', '/events/resend', { eventId: required(values, 'event-id') }), json);
    case 'keys retire':
      return print(await api.call('POST', '/platform-keys/retire', { keyId: required(values, 'key-id') }), json);
    case 'user invite':
      return print(
        await api.call('POST', `/merchants/${key('access-key')}/users`, {
          email: required(values, 'email'),
          ...(values.role === undefined ? {} : { role: values.role }),
        }),
        json,
      );
    case 'audit list': {
      const accessKey = values['access-key'];
      const path = accessKey === undefined ? '/audit' : `/merchants/${encodeURIComponent(accessKey)}/audit`;
      const trail = await api.call<{ entries: Record<string, unknown>[] }>('GET', path);
      if (json) return print(trail, true);
      return print(
        trail.entries.map((e) => ({
          at: e.at,
          actor: (e.actor as { kind: string; email?: string }).email ?? (e.actor as { kind: string }).kind,
          action: e.action,
          merchant: e.merchant,
          object: e.object,
        })),
        false,
      );
    }
    case 'audit verify': {
      const result = await api.call<
        | { ok: true; checked: number }
        | { ok: false; checked: number; broken: { id: string; at: string; action: string; reason: string } }
      >('GET', '/audit/verify');
      if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
      if (result.ok) {
        if (!json) process.stdout.write(`the audit trail holds: ${result.checked} entries checked\n`);
        return;
      }
      const { broken } = result;
      if (!json) {
        process.stdout.write(
          `the audit trail is broken at entry ${broken.id} (${broken.action}, ${broken.at}): ${broken.reason}; ` +
            `${result.checked} entries before it hold\n`,
        );
      }
      process.exitCode = 1;
      return;
    }
    case 'operator invite':
      return print(
        await api.call('POST', '/operators', {
          email: required(values, 'email'),
          ...(values.role === undefined ? {} : { role: values.role }),
        }),
        json,
      );
    case 'operator list':
      return print(await api.call('GET', '/operators'), json);
    case 'operator remove':
      return print(await api.call('POST', '/operators/remove', { email: required(values, 'email') }), json);
    case 'user list':
      return print(await api.call('GET', `/merchants/${key('access-key')}/users`), json);
    case 'channels notifications': {
      const channel = encodeURIComponent(required(values, 'channel'));
      const records = await api.call<Record<string, unknown>[]>('GET', `/channels/${channel}/notifications`);
      if (json) return print(records, true);
      return print(
        records.map(({ eventId, orderNo, outcome, detail, receivedAt }) => ({
          receivedAt: new Date(receivedAt as number).toISOString(),
          eventId,
          orderNo,
          outcome,
          detail,
        })),
        false,
      );
    }
    case 'channels files': {
      const path =
        values.channel === undefined ? '/channels/files' : `/channels/${encodeURIComponent(values.channel)}/files`;
      const files = await api.call<{
        sent: Record<string, unknown>[];
        received: Record<string, unknown>[];
        batchBookings: Record<string, unknown>[];
      }>('GET', path);
      if (json) return print(files, true);
      const at = (ms: unknown) => (typeof ms === 'number' ? new Date(ms).toISOString() : '');
      /** The bank's statuses of a file and its block, oldest first: `ACTC, block ACSP, ACSC`. */
      const statuses = (list: unknown) =>
        Array.isArray(list)
          ? (list as { level: string; status: string; reason: string | null }[])
              .map((s) => `${s.level === 'block' ? 'block ' : ''}${s.status}${s.reason ? ` ${s.reason}` : ''}`)
              .join(', ')
          : '';
      return print(
        [
          ...files.sent.map((f) => ({
            direction: 'sent',
            at: at(f.uploadedAt ?? f.createdAt),
            channel: f.channel,
            name: f.name,
            state: f.state,
            detail: [
              `${String(f.transactions)} payouts${f.instant === true ? ' (instant)' : ''}, EUR ${String(f.controlSum)}`,
              statuses(f.statuses),
              f.lastError ? String(f.lastError) : '',
            ]
              .filter((part) => part !== '')
              .join('; '),
          })),
          ...files.received.map((f) => ({
            direction: 'received',
            at: at(f.receivedAt),
            channel: f.channel,
            name: f.name,
            state: f.state,
            detail: f.reason ?? f.message ?? '',
          })),
          ...files.batchBookings.map((b) => ({
            direction: 'booked',
            at: at(b.receivedAt),
            channel: b.channel,
            name: String(b.msgId ?? b.pmtInfId ?? ''),
            state: b.state === 'mismatch' ? 'batch mismatch' : 'batch booked',
            detail: `${String(b.transactions ?? '?')} payouts, EUR ${String(b.amount)} in ${String(b.file)}${b.reason ? `: ${String(b.reason)}` : ''}`,
          })),
        ],
        false,
      );
    }
    case 'channels credits': {
      const channel = typeof values.channel === 'string' ? `/${encodeURIComponent(values.channel)}` : '';
      const query = values.all === true ? '?state=all' : '';
      const { credits } = await api.call<{ credits: Record<string, unknown>[] }>(
        'GET',
        `/channels${channel}/credits${query}`,
      );
      if (json) return print({ credits }, true);
      return print(
        credits.map((c) => ({
          receivedAt: new Date(c.receivedAt as number).toISOString(),
          channel: c.channel,
          state: c.state,
          reason: c.reason ?? '',
          amount: `${String(c.currency)} ${String(c.amount)}`,
          reference: c.reference ?? c.remittance ?? '',
          orderNo: c.orderNo ?? '',
          payer: [c.debtorName, c.debtorIban].filter(Boolean).join(', '),
          bankRef: c.accountServicerRef ?? '',
        })),
        false,
      );
    }
    case 'channels health': {
      const { channels } = await api.call<{ channels: Record<string, unknown>[] }>('GET', '/channels/health');
      const chosen = channels.filter((c) => values.channel === undefined || c.name === values.channel);
      if (values.channel !== undefined && chosen.length === 0) {
        throw new CliError(`no channel named ${String(values.channel)}`, 1);
      }
      if (json) return print({ channels: chosen }, true);
      for (const c of chosen) {
        const lines = [`${String(c.name)} (${String(c.kind)})`];
        if (c.kind === 'sepa-sftp') {
          const batch = c.openBatch as { payouts: number; closesAt: number; closedBy: string } | null;
          const cutOff = c.nextCutOff as { bankTime: string } | null;
          lines.push(
            `  ${c.instant === true ? 'SEPA Instant' : 'SEPA credit transfers'}${c.paymentsByTransfer === true ? ', payments by bank transfer' : ''}`,
            `  open batch: ${batch ? `${batch.payouts} payout(s), closes ${new Date(batch.closesAt).toISOString()} (${batch.closedBy})` : 'none'}`,
            `  next cut-off: ${cutOff ? cutOff.bankTime : 'none (cutOffs not set)'}`,
            `  files to upload: ${String(c.filesToUpload)}${c.lastUploadError ? ` (last error: ${String(c.lastUploadError)})` : ''}`,
            `  oldest file without an answer: ${Math.round(Number(c.oldestUnacknowledgedSeconds))} s`,
            `  last bank file read: ${typeof c.lastFileReadAt === 'number' ? new Date(c.lastFileReadAt).toISOString() : 'never'}`,
            `  unmatched credits: ${String(c.unmatchedCredits)}, mismatched batch bookings: ${String(c.mismatchedBatches)}`,
          );
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      }
      return;
    }

    case 'backup': {
      const { runBackup } = await import('./backup.js');
      const report = await runBackup(api.target, required(values, 'out'), (response) => api.refusal(response));
      if (json) return print(report, true);
      process.stdout.write(
        `backup written to ${report.file} (${report.bytes} bytes in ${report.seconds} s); restore it with paygate restore --from ${report.file}\n`,
      );
      return;
    }
    case 'channels sync':
      return print(await api.call('POST', '/channels/sync', { orderNo: required(values, 'order-no') }), json);
    default:
      throw new CliError(`unknown command: ${positionals.join(' ')}; paygate --help lists the commands`, 2);
  }
}

const { argv, debug } = takeDebugFlag(process.argv.slice(2));
run(argv).catch((error: unknown) => {
  process.exit(reportFailure(error, debug));
});
