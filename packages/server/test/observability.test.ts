/**
 * Observability against a real platform: W3C trace context from a merchant's request through
 * authentication and the database to the webhook attempt and the receiver (spans caught by an
 * in-memory exporter), Prometheus metrics with their labels, the exporter off by default, the
 * alert rules checked by promtool and the dashboard's queries against the live /metrics.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { channelSpan, startTracing } from '../src/observability/tracing.js';
import {
  buildRead,
  buildWrite,
  createMerchant,
  databases,
  paymentInput,
  post,
  startTestPlatform,
  type TestMerchant,
  type TestPlatform,
} from './harness.js';
import { headerOf, type Receiver, startReceiver, verifyReceived } from './receiver.js';

// Tracing is process-wide: this test process records every span in memory.
const exporter = new InMemorySpanExporter();
startTracing('paygate-test', {}, { exporter });

const execFileAsync = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SERVER = fileURLToPath(new URL('../', import.meta.url));

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

/** The value of one sample of the exposition, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = new Map<string, string>();
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) present.set(pair[1]!, pair[2]!);
    if (Object.entries(labels).every(([key, value]) => present.get(key) === value)) return Number(match[4]);
  }
  return undefined;
}

async function scrape(platform: TestPlatform): Promise<string> {
  const response = await fetch(`${platform.url}/metrics`);
  assert.equal(response.status, 200);
  return response.text();
}

/** Sends a signed POST carrying `traceparent`. */
async function tracedPost(platform: TestPlatform, merchant: TestMerchant, path: string, payload: unknown) {
  const signed = buildWrite(merchant, path, payload, platform.services.now());
  const response = await fetch(platform.url + path, {
    method: 'POST',
    headers: { ...signed.headers, traceparent: TRACEPARENT },
    body: new Uint8Array(signed.body),
  });
  return { status: response.status, body: (await response.json()) as { data?: { orderNo?: string } } };
}

for (const database of databases()) {
  describe(`observability (${database})`, () => {
    let platform: TestPlatform;
    let merchant: TestMerchant;
    let receiver: Receiver;

    before(async () => {
      platform = await startTestPlatform({ database, webhooks: { totalTimeoutMs: 2000, connectTimeoutMs: 2000 } });
      merchant = await createMerchant(platform);
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
      await platform.close();
    });

    it("continues the caller's trace from the request through auth and the database to the webhook attempt", async () => {
      const created = await post<{ orderNo: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ webhookUrl: receiver.url }),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const orderNo = created.body.data?.orderNo as string;
      exporter.reset();

      // The move to a final state is the traced request: its event joins the caller's trace.
      const canceled = await tracedPost(platform, merchant, '/api/v1/payments/cancel', { orderNo });
      assert.equal(canceled.status, 200, JSON.stringify(canceled.body));
      const stored = await platform.services.db.query<{ traceparent: string | null }>(
        `SELECT traceparent FROM events WHERE order_no = $1 AND status = 'CANCELED'`,
        [orderNo],
      );
      const storedParent = stored.rows[0]?.traceparent;
      assert.match(storedParent ?? '', new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));

      assert.equal(await platform.services.webhooks.deliverNext('trace-worker'), 'delivered');
      await receiver.waitFor(1);
      const sent = headerOf(receiver.received[0]!, 'traceparent');
      assert.match(sent ?? '', new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`), 'the webhook carries the trace');
      const verified = await verifyReceived(receiver.received[0]!, merchant.webhookKeys, platform.services.now());
      assert.ok(verified.ok, 'the traceparent header does not disturb the signature');

      const spans = exporter.getFinishedSpans();
      const named = (predicate: (span: ReadableSpan) => boolean) => spans.filter(predicate);
      const request = named((s) => s.kind === SpanKind.SERVER && s.name === 'POST /api/v1/payments/cancel');
      assert.equal(request.length, 1, spans.map((s) => s.name).join(', '));
      const requestSpan = request[0]!;
      assert.equal(requestSpan.spanContext().traceId, TRACE_ID);
      assert.equal(requestSpan.parentSpanContext?.spanId, CALLER_SPAN, "a child of the caller's span");
      assert.equal(requestSpan.attributes['http.route'], '/api/v1/payments/cancel');
      assert.equal(requestSpan.attributes['http.response.status_code'], 200);

      const auth = named((s) => s.name === 'authenticate' && s.spanContext().traceId === TRACE_ID);
      assert.equal(auth.length, 1);
      assert.equal(auth[0]!.parentSpanContext?.spanId, requestSpan.spanContext().spanId);
      assert.equal(auth[0]!.attributes['paygate.auth.outcome'], 'ok');

      const statements = named((s) => s.attributes['db.system.name'] === 'postgresql');
      const inTrace = statements.filter((s) => s.spanContext().traceId === TRACE_ID);
      assert.ok(
        inTrace.some((s) => s.name === 'UPDATE'),
        'the UPDATE of the payment is in the trace',
      );
      assert.ok(
        inTrace.some((s) => s.name === 'INSERT'),
        'the INSERT of the event is in the trace',
      );
      assert.ok(inTrace.some((s) => s.name === 'TRANSACTION'));
      for (const statement of statements) {
        const text = String(statement.attributes['db.query.text'] ?? '');
        assert.ok(!text.includes(merchant.accessKey), 'no statement text carries parameter values');
      }

      const attempt = named((s) => s.name === 'webhook attempt');
      assert.equal(attempt.length, 1);
      assert.equal(attempt[0]!.spanContext().traceId, TRACE_ID, 'the attempt is in the same trace');
      assert.equal(attempt[0]!.parentSpanContext?.spanId, storedParent?.split('-')[2]);
      assert.equal(attempt[0]!.attributes['paygate.webhook.attempt'], 1);
      assert.equal(attempt[0]!.attributes['http.response.status_code'], 200);
      assert.equal(sent, `00-${TRACE_ID}-${attempt[0]!.spanContext().spanId}-01`, 'sent as the attempt span');
      // Identifiers and outcomes only: no body, URL or signature on any span.
      const body = Buffer.from(receiver.received[0]!.body).toString('utf8');
      const signature = headerOf(receiver.received[0]!, 'signature') ?? '';
      for (const span of spans) {
        for (const value of Object.values(span.attributes)) {
          const text = String(value);
          assert.ok(text !== body && !text.includes(receiver.url) && (!signature || !text.includes(signature)));
        }
      }
    });

    it('a refused request records the failing step on its auth span, never secrets', async () => {
      exporter.reset();
      const signed = buildRead(merchant, '/api/v1/payments/list', 'pageSize=5', platform.services.now());
      const headers = { ...signed.headers, signature: 'sig1=:AAAA:', traceparent: TRACEPARENT };
      const response = await fetch(`${platform.url}/api/v1/payments/list?pageSize=5`, { headers });
      assert.equal(response.status, 401);
      const auth = exporter.getFinishedSpans().find((s) => s.name === 'authenticate');
      assert.equal(auth?.attributes['paygate.auth.outcome'], 'refused');
      assert.equal(auth?.attributes['paygate.auth.step'], 'signature');
      assert.deepEqual(Object.keys(auth?.attributes ?? {}).sort(), ['paygate.auth.outcome', 'paygate.auth.step']);
    });

    it('metrics carry route templates, statuses, auth failure steps, final states and ledger postings', async () => {
      const before = await scrape(platform);
      const created = await post<{ orderNo: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ webhookUrl: receiver.url }),
      );
      assert.equal(created.status, 200);
      const orderNo = created.body.data?.orderNo as string;
      const paid = await post(platform, merchant, '/api/v1/sandbox/payments/simulate', {
        orderNo,
        status: 'SUCCEEDED',
      });
      assert.equal(paid.status, 200, JSON.stringify(paid.body));
      const unsigned = await fetch(`${platform.url}/api/v1/payments?orderNo=${orderNo}`);
      assert.equal(unsigned.status, 401);
      const text = await scrape(platform);

      const delta = (name: string, labels: Record<string, string>) =>
        (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
      assert.equal(
        delta('paygate_http_requests_total', { method: 'POST', route: '/api/v1/payments', status: '200' }),
        1,
      );
      assert.equal(
        delta('paygate_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/payments' }),
        1,
      );
      assert.ok(!text.includes(orderNo), 'no raw URL in any label');
      assert.equal(delta('paygate_auth_failures_total', { step: 'shape' }), 1);
      assert.equal(delta('paygate_orders_final_total', { type: 'PAYMENT', status: 'SUCCEEDED' }), 1);
      assert.equal(delta('paygate_ledger_postings_total', { kind: 'payment' }), 1);
      assert.equal(
        delta('paygate_http_requests_total', { method: 'GET', route: '/api/v1/payments', status: '401' }),
        1,
      );
      assert.ok((sample(text, 'paygate_auth_nonces') ?? -1) >= 2, 'the nonce store size is read at scrape');
      assert.notEqual(sample(text, 'paygate_db_pool_max_connections'), undefined);
      if (database === 'postgres') assert.ok((sample(text, 'paygate_db_pool_max_connections') ?? 0) > 0);
      const embeddedMemory = sample(text, 'paygate_embedded_database_memory_bytes');
      if (database === 'pglite') assert.ok((embeddedMemory ?? 0) >= 64 * 2 ** 20, `embedded memory: ${embeddedMemory}`);
      else assert.equal(embeddedMemory, undefined, 'no embedded database on PostgreSQL');
      if (database === 'postgres') {
        for (const connection of ['reads', 'writes']) {
          const inFlight = sample(text, 'paygate_db_pipelined_statements', { connection });
          assert.ok(inFlight !== undefined && inFlight >= 0, `pipelined statements (${connection}): ${inFlight}`);
        }
      }
      assert.match(text, /# TYPE paygate_channel_calls_total counter/);
      // Names that existed before keep working.
      assert.match(text, /# TYPE paygate_webhook_deliveries_total counter/);
      assert.match(text, /# TYPE paygate_webhook_queue_depth gauge/);
    });

    it("the dashboard's queries use only metric names the platform exposes", async () => {
      const text = await scrape(platform);
      const exposed = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)/gm)].map((m) => m[1]!));
      const histograms = [...text.matchAll(/^# TYPE (\S+) histogram/gm)].map((m) => m[1]!);
      for (const name of histograms) for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(name + suffix);
      const dashboard = JSON.parse(readFileSync(`${REPO}deploy/grafana/paygate.json`, 'utf8')) as {
        panels: { title: string; targets?: { expr: string }[] }[];
      };
      let queries = 0;
      for (const panel of dashboard.panels) {
        for (const target of panel.targets ?? []) {
          queries += 1;
          for (const [name] of target.expr.matchAll(/\bpaygate_[a-z0-9_]+/g)) {
            assert.ok(exposed.has(name), `panel "${panel.title}" queries ${name}, which /metrics does not expose`);
          }
        }
      }
      assert.ok(queries >= 8, 'the dashboard has its panels');
    });
  });
}

describe('tracing helpers and configuration', () => {
  it('channelSpan makes a CLIENT span with the channel and operation, and marks a throw as an error', async () => {
    exporter.reset();
    assert.equal(await channelSpan('pix.createCharge', async (span) => (span.setAttribute('x', 1), 'ok')), 'ok');
    await assert.rejects(
      channelSpan('pix.refund', async () => {
        throw Object.assign(new Error('boom'), { code: 'ETIMEDOUT' });
      }),
    );
    const [ok, failed] = exporter.getFinishedSpans();
    assert.equal(ok?.name, 'channel pix.createCharge');
    assert.equal(ok?.kind, SpanKind.CLIENT);
    assert.deepEqual(ok?.attributes, { 'paygate.channel': 'pix', 'paygate.channel.operation': 'createCharge', x: 1 });
    assert.equal(failed?.status.code, 2);
    assert.equal(failed?.attributes['error.type'], 'ETIMEDOUT');
  });

  it('the exporter is off by default and sends OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    const script = `
      import { startTracing, inSpan, tracingEnabled, activeTraceparent } from './src/observability/tracing.ts';
      const tracing = startTracing('paygate-api');
      let traceparent = null;
      await inSpan('probe', {}, async () => { traceparent = activeTraceparent(); });
      await tracing.shutdown();
      console.log(JSON.stringify({ enabled: tracing.enabled, traceparent }));`;
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: SERVER,
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
      });
    const off = run({});
    assert.equal(off.status, 0, off.stderr);
    assert.deepEqual(JSON.parse(off.stdout), { enabled: false, traceparent: null });

    const posts: { path: string; contentType: string; body: Buffer }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        posts.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const port = (collector.address() as AddressInfo).port;
      const on = await promisify(execFile)(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script],
        {
          cwd: SERVER,
          env: {
            PATH: process.env.PATH ?? '',
            OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          },
        },
      );
      assert.equal(JSON.parse(on.stdout).enabled, true);
      assert.equal(posts.length, 1);
      assert.equal(posts[0]?.path, '/v1/traces');
      const body = posts[0]!.body.toString('utf8');
      assert.match(body, /paygate-api/);
      assert.match(body, /"probe"/);
    } finally {
      collector.close();
    }
  });
});

describe('alert rules', () => {
  const promtool = spawnSync('promtool', ['--version']).status === 0;
  it(
    'pass promtool check rules and the rule unit tests',
    { skip: !promtool && !process.env.CI && 'promtool is not installed' },
    async () => {
      const rules = `${REPO}deploy/prometheus/alerts.yml`;
      const checked = await execFileAsync('promtool', ['check', 'rules', rules]);
      assert.match(checked.stdout, /SUCCESS/);
      const tested = await execFileAsync('promtool', ['test', 'rules', `${REPO}deploy/prometheus/alerts.test.yml`]);
      assert.match(tested.stdout + tested.stderr, /SUCCESS/);
    },
  );

  it('every alert has a summary and a description', () => {
    const text = readFileSync(`${REPO}deploy/prometheus/alerts.yml`, 'utf8');
    const alerts = text.split(/\n\s+- alert: /).slice(1);
    assert.ok(alerts.length >= 8);
    for (const alert of alerts) {
      assert.match(alert, /\n\s+summary: \S/, alert.split('\n')[0]);
      assert.match(alert, /\n\s+description: \S/, alert.split('\n')[0]);
    }
  });
});
