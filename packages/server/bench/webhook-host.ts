// Bench only: the real platform (startPlatform) on DATABASE_URL or PGlite, logging off, that seeds
// webhook backlogs when its parent asks (over IPC) and answers how many of a run are delivered.
// With the embedded database its own dispatcher delivers (PAYGATE_WORKERS=true, as `npx paygate`
// runs by default); with PostgreSQL the parent starts `paygate worker` processes beside it.
// Prints {url, webhookKeys} once ready.
import { generateSigningKey } from '@paygate/protocol';
import { parseConfig } from '../src/config.js';
import { onboardingView } from '../src/modules/admin/routes.js';
import { startPlatform } from '../src/platform.js';

/** What the parent asks: seed a run of due events, or count its delivered ones. */
export type HostAsk =
  | { readonly op: 'seed'; readonly run: string; readonly count: number; readonly url: string }
  | { readonly op: 'delivered'; readonly run: string }
  | { readonly op: 'backends' };
type HostRequest = HostAsk & { readonly id: number };

const config = parseConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', PAYGATE_RATE_LIMIT: '0' });
const platform = await startPlatform(config, { logger: false });
const { db } = platform.services;
const merchant = await platform.services.merchants.create('Bench', generateSigningKey().publicKey.toString('base64'));
const view = await onboardingView(platform.services, merchant.accessKey);
const merchantRow = await db.query<{ id: bigint }>('SELECT id FROM merchants WHERE access_key = $1', [
  merchant.accessKey,
]);
const merchantId = merchantRow.rows[0]?.id as bigint;

/** Writes `count` events due now (one statement) for the bench merchant to `url`. */
async function seed(run: string, count: number, url: string): Promise<void> {
  await db.query(
    `INSERT INTO events (event_id, merchant_id, order_type, order_no, status, webhook_url, body, created_at, next_attempt_at)
     SELECT 'evt_' || $1 || lpad(i::text, 25, '0'), $2, 'PAYMENT', 'P' || $1 || lpad(i::text, 17, '0'), 'SUCCEEDED', $3,
            convert_to(json_build_object('eventId', 'evt_' || $1 || lpad(i::text, 25, '0'), 'orderType', 'PAYMENT',
              'orderNo', 'P' || $1 || lpad(i::text, 17, '0'), 'merchantOrderNo', 'M-' || i, 'status', 'SUCCEEDED',
              'currency', 'BRL', 'amount', '125.50', 'paidAmount', '125.50', 'channelTradeNo', 'CH' || i,
              'payer', json_build_object('name', 'Maria Silva', 'documentNumber', '00123456789'), 'attach', 'bench')::text, 'UTF8'),
            now(), now()
       FROM generate_series(1, $4) AS i`,
    [run, merchantId, url, count],
  );
}

async function delivered(run: string): Promise<number> {
  const result = await db.query<{ n: bigint }>(
    `SELECT count(*)::bigint AS n FROM events WHERE event_id LIKE $1 AND delivery_status = 'delivered'`,
    [`evt_${run}%`],
  );
  return Number(result.rows[0]?.n ?? 0);
}

/** PostgreSQL: the server processes of this database's connections (CPU accounting); PGlite: none. */
async function backends(): Promise<number[]> {
  if (db.kind !== 'postgres') return [];
  const result = await db.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return result.rows.map((row) => row.pid);
}

process.on('message', (message: HostRequest) => {
  const work =
    message.op === 'seed'
      ? seed(message.run, message.count, message.url)
      : message.op === 'delivered'
        ? delivered(message.run)
        : backends();
  void work.then(
    (value) => process.send?.({ id: message.id, value: value ?? null }),
    (error: unknown) => process.send?.({ id: message.id, error: String(error) }),
  );
});
process.once('SIGTERM', () => {
  void platform.close().finally(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: platform.url, webhookKeys: view.webhookKeys })}\n`);
