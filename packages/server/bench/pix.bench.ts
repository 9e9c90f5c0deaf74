// `npm run bench -- pix`: the pix-api channel through `paygate-pix` (its own process, over mTLS)
// on the embedded database. Two figures:
//   1. callback → merchant webhook: from the simulator's `/control/pay` answer (the Pix received;
//      its callback leaves on the simulator's next tick, PIX_TICK_MS=10) until the merchant's
//      receiver has the SUCCEEDED webhook — the callback, the platform's GET /cob, the settling
//      transaction and the delivery. p50 and p99 over BENCH_PIX_PAYMENTS payments, one at a time.
//   2. polling cost: one polling pass (`pollOnce`) over BENCH_PIX_STALE open charges past
//      PAYGATE_CHANNEL_POLL_AFTER, each a GET /cob over mTLS answered ATIVA, scaled to 10,000.
// Nothing here asserts a time; the figures are printed. The machine's other work shows in them.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pollOnce } from '../src/modules/channels/polling.js';
import { createMerchant, paymentInput, post, startTestPlatform } from '../test/harness.js';
import { control, startSimulator, stopSimulator } from '../test/pix-sim-harness.js';

const PAYMENTS = Number(process.env.BENCH_PIX_PAYMENTS ?? 200);
const STALE = Number(process.env.BENCH_PIX_STALE ?? 1_000);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

async function txidOf(platform: Awaited<ReturnType<typeof startTestPlatform>>, orderNo: string) {
  const row = await platform.services.db.query<{ channel_trade_no: string }>(
    'SELECT channel_trade_no FROM payments WHERE order_no = $1',
    [orderNo],
  );
  return row.rows[0]?.channel_trade_no as string;
}

const sim = await startSimulator({ PIX_TICK_MS: '10', PIX_TOKEN_TTL: '3600' });
const channels = join(sim.dir, 'channels.json');
writeFileSync(channels, JSON.stringify({ channels: [{ ...sim.channel, name: 'pix' }] }));

try {
  // 1. callback → merchant webhook
  const arrived = new Map<string, () => void>();
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.end('ok');
      const event = JSON.parse(Buffer.concat(chunks).toString()) as { orderNo: string };
      arrived.get(event.orderNo)?.();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const platform = await startTestPlatform({
    env: { PAYGATE_CHANNELS: channels, PAYGATE_WORKERS: 'true', PAYGATE_CHANNEL_POLL_AFTER: '1h' },
  });
  const latencies: number[] = [];
  try {
    const merchant = await createMerchant(platform);
    for (let i = 0; i < PAYMENTS; i++) {
      const created = await post<{ orderNo: string }>(
        platform,
        merchant,
        '/api/v1/payments',
        paymentInput({ webhookUrl }),
      );
      const orderNo = created.body.data?.orderNo as string;
      const delivered = new Promise<void>((resolve) => arrived.set(orderNo, resolve));
      await control(sim, 'pay', { txid: await txidOf(platform, orderNo) });
      const paidAt = performance.now();
      await delivered;
      latencies.push(performance.now() - paidAt);
    }
  } finally {
    await platform.close();
    receiver.close();
  }
  latencies.sort((a, b) => a - b);
  console.log(
    `callback → merchant webhook, ${PAYMENTS} payments: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
  );

  // 2. polling cost per 10,000 stale charges
  const stale = await startTestPlatform({
    env: { PAYGATE_CHANNELS: channels, PAYGATE_WORKERS: 'false', PAYGATE_CHANNEL_POLL_AFTER: '60s' },
  });
  try {
    const merchant = await createMerchant(stale);
    for (let i = 0; i < STALE; i++) {
      const created = await post(stale, merchant, '/api/v1/payments', paymentInput({ amount: '1.00' }));
      if (created.status !== 200) throw new Error(`create ${created.status}`);
    }
    stale.advance(61_000);
    const started = performance.now();
    const result = await pollOnce(stale.services, {
      channel: (name) => stale.services.channels.get(name),
      limit: STALE,
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `polling: ${result.queried} stale charges (GET /cob each, ${result.failed} failed) in ${seconds.toFixed(2)} s: ${((seconds * 10_000) / STALE).toFixed(1)} s per 10,000`,
    );
  } finally {
    await stale.close();
  }
} finally {
  await stopSimulator(sim);
}
