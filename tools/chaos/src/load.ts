/**
 * The load: merchants doing what shops do, each flow an order's life. Payments through the
 * sandbox (USD cards, EUR SEPA), through paygate-psp (MXN SPEI, BRL boleto) and paygate-pix
 * (BRL Pix), settled, failed, expired or canceled; payouts through the sandbox (BRL), the PSP
 * (MXN) and the bank (EUR, SEPA files), confirmed, failed and returned; reads, lists, balances
 * and receipts between. A request without an answer or answered 5xx is sent again as a shop
 * would (a create with the same merchantOrderNo, freshly signed); some creates are repeated
 * after their 200 and some requests replayed byte for byte, which must be refused.
 */
import { randomUUID } from 'node:crypto';
import type { Answer, MerchantClient } from './client.js';
import type { ChannelName, History, Intent, OrderRecord } from './history.js';
import type { Receiver } from './receivers.js';
import type { Rng } from './rng.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Shop {
  readonly client: MerchantClient;
  readonly receiver: Receiver;
}

export interface LoadOptions {
  readonly shops: readonly Shop[];
  readonly history: History;
  readonly rng: Rng;
  readonly controls: { readonly psp: string; readonly pix: string; readonly bank: string };
  /** Flows running at once. */
  readonly concurrency: number;
  /** How long a flow keeps retrying one step before it leaves the order as it is. */
  readonly stepDeadlineMs: number;
}

type Flow =
  | 'sandbox-payment'
  | 'psp-payment'
  | 'pix-payment'
  | 'bank-transfer-payment'
  | 'sandbox-payout'
  | 'psp-payout'
  | 'bank-payout'
  | 'reads';

const FLOWS: Record<Flow, number> = {
  'sandbox-payment': 5,
  'psp-payment': 3,
  'pix-payment': 3,
  'bank-transfer-payment': 3,
  'sandbox-payout': 2,
  'psp-payout': 2,
  'bank-payout': 3,
  reads: 3,
};

/** Whether an answer is one to send again (no answer, or a 5xx: the platform or a channel was down). */
const transient = (answer: Answer | undefined) => answer === undefined || answer.status >= 500;

export class Load {
  private stopping = false;
  private loops: Promise<void>[] = [];
  private sequence = 0;
  /** Flows run to their end, by name. */
  readonly flows: Record<string, number> = {};

  constructor(private readonly options: LoadOptions) {}

  /** Funds every shop in every currency it pays out in, then starts the flows. */
  async start(): Promise<void> {
    await Promise.all(this.options.shops.map((shop) => this.fund(shop)));
    this.loops = Array.from({ length: this.options.concurrency }, (_, i) => this.loop(i));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  private async loop(index: number): Promise<void> {
    const { rng, shops } = this.options;
    while (!this.stopping) {
      const shop = shops[(index + rng.int(0, shops.length - 1)) % shops.length] as Shop;
      const flow = rng.weighted(FLOWS);
      try {
        await this.run(flow, shop);
        this.flows[flow] = (this.flows[flow] ?? 0) + 1;
      } catch (error) {
        this.options.history.anomaly(`flow ${flow} threw: ${(error as Error).stack ?? String(error)}`);
      }
      await sleep(rng.int(50, 400));
    }
  }

  private run(flow: Flow, shop: Shop): Promise<void> {
    switch (flow) {
      case 'sandbox-payment':
        return this.sandboxPayment(shop);
      case 'psp-payment':
        return this.pspPayment(shop);
      case 'pix-payment':
        return this.pixPayment(shop);
      case 'bank-transfer-payment':
        return this.bankTransferPayment(shop);
      case 'sandbox-payout':
        return this.sandboxPayout(shop);
      case 'psp-payout':
        return this.pspPayout(shop);
      case 'bank-payout':
        return this.bankPayout(shop);
      case 'reads':
        return this.reads(shop);
    }
  }

  // ---- steps -----------------------------------------------------------------------------------

  /** Sends until an answer that is not transient, or the step's deadline; the last answer. */
  private async untilAnswered(send: () => Promise<Answer | undefined>): Promise<Answer | undefined> {
    const deadline = Date.now() + this.options.stepDeadlineMs;
    let answer: Answer | undefined;
    for (let attempt = 0; ; attempt++) {
      answer = await send();
      if (!transient(answer) || Date.now() > deadline) return answer;
      await sleep(Math.min(2000, 200 * 2 ** Math.min(attempt, 4)));
    }
  }

  private nextMerchantOrderNo(prefix: string): string {
    this.sequence += 1;
    return `${prefix}-${this.sequence}-${randomUUID().slice(0, 8)}`;
  }

  /** Creates an order (retrying), repeats it or replays its bytes now and then; its record. */
  private async create(
    shop: Shop,
    type: 'PAYMENT' | 'PAYOUT',
    channel: ChannelName,
    payload: Record<string, unknown> & { merchantOrderNo: string; currency: string; amount: string },
  ): Promise<OrderRecord | undefined> {
    const { history, rng } = this.options;
    const path = type === 'PAYMENT' ? '/api/v1/payments' : '/api/v1/payouts';
    const record = history.order({
      merchant: shop.client.merchant.accessKey,
      type,
      channel,
      merchantOrderNo: payload.merchantOrderNo,
      currency: payload.currency,
      amount: payload.amount,
    });
    let last = shop.client.build(path, payload);
    const answer = await this.untilAnswered(async () => {
      last = shop.client.build(path, payload);
      return shop.client.send(last);
    });
    if (answer?.status !== 200) {
      // A payout the balance does not cover is the shop's problem, not the platform's.
      if (answer && answer.body.msg !== 'INSUFFICIENT_BALANCE') {
        history.anomaly(`${path} ${payload.merchantOrderNo}: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
      return answer === undefined ? record : undefined;
    }
    this.accept(record, answer, 'create', Date.now());
    if (rng.chance(0.1)) {
      // The same bytes again: the nonce was used, so authentication refuses it.
      const replay = await shop.client.send(last, true);
      if (replay && replay.status !== 401) {
        history.anomaly(`replay of ${path} ${payload.merchantOrderNo} answered ${replay.status}`);
      }
    }
    if (rng.chance(0.15)) {
      record.repeated = true;
      const again = await this.untilAnswered(() => shop.client.post(path, payload));
      if (again?.status === 200) this.accept(record, again, 'create', Date.now());
      else if (again) history.anomaly(`repeat of ${payload.merchantOrderNo}: ${again.status} ${again.body.msg}`);
    }
    return record;
  }

  /** Records a 200 answer carrying an order. */
  private accept(record: OrderRecord, answer: Answer, source: 'create' | 'query', sentAt: number): void {
    const data = answer.body.data as
      { orderNo?: string; status?: string; channelTradeNo?: string; bankTransfer?: { reference?: string } } | undefined;
    if (!data?.orderNo) return;
    if (source === 'create') record.createAnswers.push(data.orderNo);
    record.orderNo ??= data.orderNo;
    if (record.channel === 'pix' && data.channelTradeNo && !record.txid) record.txid = data.channelTradeNo;
    if (record.channel === 'bank' && data.bankTransfer?.reference) record.reference ??= data.bankTransfer.reference;
    if (data.status) {
      record.observations.push({ status: data.status, sentAt, answeredAt: Date.now(), source });
    }
  }

  /** A signed write about an order (retrying); the intent it stands for, with its outcome. */
  private async act(
    shop: Shop,
    record: OrderRecord,
    path: string,
    payload: Record<string, unknown>,
    action: Intent['action'] | undefined,
  ): Promise<Answer | undefined> {
    const intent: Intent | undefined = action ? { action, at: Date.now(), outcome: 'unknown' } : undefined;
    if (intent) record.intents.push(intent);
    const answer = await this.untilAnswered(() => shop.client.post(path, payload));
    if (intent && answer) {
      intent.outcome = answer.status === 200 ? 'ok' : 'refused';
      if (answer.status !== 200) intent.detail = `${answer.status} ${answer.body.msg}`;
    }
    if (answer && answer.status !== 200 && answer.status !== 409) {
      this.options.history.anomaly(`${path} ${record.orderNo}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    return answer;
  }

  /** A simulator's test control (plain JSON), retried while the simulator is down. */
  private async control(
    record: OrderRecord,
    url: string,
    body: unknown,
    action: Intent['action'],
    retryWhile: (status: number) => boolean = () => false,
  ): Promise<number> {
    const intent: Intent = { action, at: Date.now(), outcome: 'unknown' };
    record.intents.push(intent);
    const deadline = Date.now() + this.options.stepDeadlineMs;
    for (;;) {
      let status: number;
      let text = '';
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        text = await response.text();
      } catch {
        status = 0;
      }
      if (status !== 0 && !retryWhile(status)) {
        intent.outcome = status === 200 ? 'ok' : 'refused';
        if (status !== 200) intent.detail = `${status} ${text.slice(0, 200)}`;
        return status;
      }
      if (Date.now() > deadline || this.stopping) {
        if (status !== 0) {
          intent.outcome = 'refused';
          intent.detail = `${status} ${text.slice(0, 200)}`;
        }
        return status;
      }
      await sleep(500);
    }
  }

  private async query(shop: Shop, record: OrderRecord): Promise<string | undefined> {
    if (!record.orderNo) return undefined;
    const path = record.type === 'PAYMENT' ? '/api/v1/payments' : '/api/v1/payouts';
    const sentAt = Date.now();
    const answer = await this.untilAnswered(() => shop.client.get(path, `orderNo=${record.orderNo}`));
    if (answer?.status === 200) {
      this.accept(record, answer, 'query', sentAt);
      return (answer.body.data as { status?: string }).status;
    }
    if (answer) this.options.history.anomaly(`query ${record.orderNo}: ${answer.status} ${answer.body.msg}`);
    return undefined;
  }

  /** Queries until the status is one of `statuses` (or the deadline); the last status seen. */
  private async awaitStatus(shop: Shop, record: OrderRecord, statuses: string[], timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    let status: string | undefined;
    while (!this.stopping) {
      status = await this.query(shop, record);
      if ((status && statuses.includes(status)) || Date.now() > deadline) return status;
      await sleep(1000);
    }
    return status;
  }

  private think(): Promise<void> {
    return sleep(this.options.rng.int(100, 1500));
  }

  private payment(shop: Shop, prefix: string, currency: string, code: string, amount: string) {
    return {
      merchantOrderNo: this.nextMerchantOrderNo(prefix),
      currency,
      amount,
      paymentMethod: { code },
      webhookUrl: `${shop.receiver.url}/webhook/payment`,
      attach: `chaos ${prefix}`,
    };
  }

  private amount(min: number, max: number): string {
    const cents = this.options.rng.int(min * 100, max * 100);
    return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
  }

  // ---- flows -----------------------------------------------------------------------------------

  private async sandboxPayment(shop: Shop): Promise<void> {
    const { rng } = this.options;
    // EUR/SEPA is served by the bank channel (payments by bank transfer), so not the sandbox's.
    const [currency, code] = ['USD', 'CARD'] as const;
    const record = await this.create(
      shop,
      'PAYMENT',
      'sandbox',
      this.payment(shop, 'SBP', currency, code, this.amount(1, 900)),
    );
    if (!record?.orderNo) return;
    await this.think();
    const fate = rng.weighted({ SUCCEEDED: 55, FAILED: 15, CANCELED: 15, EXPIRED: 5, leave: 10 });
    if (fate === 'CANCELED') {
      await this.act(shop, record, '/api/v1/payments/cancel', { orderNo: record.orderNo }, 'CANCELED');
    } else if (fate !== 'leave') {
      const payload: Record<string, unknown> = { orderNo: record.orderNo, status: fate };
      if (fate === 'SUCCEEDED') payload.payer = { name: 'Chaos Payer', documentNumber: '01234567890' };
      await this.act(shop, record, '/api/v1/sandbox/payments/simulate', payload, fate);
    }
    await this.query(shop, record);
  }

  private async pspPayment(shop: Shop): Promise<void> {
    const { rng, controls } = this.options;
    const [currency, code] = rng.pick([
      ['MXN', 'SPEI'],
      ['BRL', 'BOLETO'],
    ] as const);
    const record = await this.create(
      shop,
      'PAYMENT',
      'psp',
      this.payment(shop, 'PSP', currency, code, this.amount(20, 900)),
    );
    if (!record?.orderNo) return;
    await this.think();
    const fate = rng.weighted({ SUCCEEDED: 60, FAILED: 15, CANCELED: 15, leave: 10 });
    if (fate === 'CANCELED') {
      await this.act(shop, record, '/api/v1/payments/cancel', { orderNo: record.orderNo }, 'CANCELED');
    } else if (fate !== 'leave') {
      await this.control(
        record,
        `${controls.psp}/control/payments/complete`,
        { reference: record.orderNo, status: fate, ...(fate === 'SUCCEEDED' ? { payer: { name: 'Ana Souza' } } : {}) },
        fate,
      );
    }
    if (fate !== 'leave') await this.awaitStatus(shop, record, ['SUCCEEDED', 'FAILED', 'CANCELED']);
  }

  private async pixPayment(shop: Shop): Promise<void> {
    const { rng, controls } = this.options;
    const record = await this.create(
      shop,
      'PAYMENT',
      'pix',
      this.payment(shop, 'PIX', 'BRL', 'PIX', this.amount(1, 900)),
    );
    if (!record?.orderNo) return;
    if (!record.txid) await this.query(shop, record);
    await this.think();
    const fate = rng.weighted({ SUCCEEDED: 60, FAILED: 10, CANCELED: 15, leave: 15 });
    if (fate === 'CANCELED') {
      await this.act(shop, record, '/api/v1/payments/cancel', { orderNo: record.orderNo }, 'CANCELED');
    } else if (fate === 'SUCCEEDED' && record.txid) {
      await this.control(
        record,
        `${controls.pix}/control/pay`,
        { txid: record.txid, payer: { name: 'Joana Lima', cpf: '12345678909' } },
        'SUCCEEDED',
      );
    } else if (fate === 'FAILED' && record.txid) {
      await this.control(record, `${controls.pix}/control/remove`, { txid: record.txid }, 'FAILED');
    }
    if (fate !== 'leave') await this.awaitStatus(shop, record, ['SUCCEEDED', 'FAILED', 'CANCELED']);
  }

  /** A payer's SEPA credit transfer to the channel's account, through paygate-bank's control. */
  private credit(
    record: OrderRecord,
    amount: string,
    remittance: { reference: string } | { text: string },
    action: 'SUCCEEDED' | 'CREDIT',
  ): Promise<number> {
    const { rng, controls } = this.options;
    const debtor = rng.pick([
      { name: 'Jürgen Müller', iban: 'DE89370400440532013000' },
      { name: 'Zoë Dupont', iban: 'FR1420041010050500013M02606' },
      { name: 'Piet de Vries', iban: 'NL91ABNA0417164300' },
    ]);
    return this.control(record, `${controls.bank}/control/credits`, { amount, debtor, ...remittance }, action);
  }

  /**
   * A EUR payment by bank transfer: the payer pays it (by the structured reference, or with the
   * reference written in the transfer's text, in groups of four as people write it), pays twice,
   * pays another amount, or never pays (the payment expires). The bank's credit settles it once.
   */
  private async bankTransferPayment(shop: Shop): Promise<void> {
    const { rng } = this.options;
    const amount = this.amount(1, 900);
    const record = await this.create(shop, 'PAYMENT', 'bank', this.payment(shop, 'SCT', 'EUR', 'SEPA', amount));
    if (!record?.orderNo) return;
    if (!record.reference) {
      this.options.history.anomaly(
        `${record.orderNo}: a payment by bank transfer answered without bankTransfer.reference`,
      );
      return;
    }
    const reference = record.reference;
    await this.think();
    const fate = rng.weighted({ paid: 55, text: 10, twice: 10, otherAmount: 8, unknown: 5, leave: 12 });
    const grouped = reference
      .replace(/(.{4})/g, '$1 ')
      .trim()
      .toLowerCase();
    switch (fate) {
      case 'paid':
        await this.credit(record, amount, { reference }, 'SUCCEEDED');
        break;
      case 'text':
        await this.credit(record, amount, { text: `Order ${record.merchantOrderNo} ${grouped}` }, 'SUCCEEDED');
        break;
      case 'twice':
        await this.credit(record, amount, { reference }, 'SUCCEEDED');
        await this.think();
        await this.credit(record, amount, { reference: grouped }, 'CREDIT');
        break;
      case 'otherAmount': {
        const other = this.amount(1, 900);
        await this.credit(record, other === amount ? '0.01' : other, { reference }, 'CREDIT');
        break;
      }
      case 'unknown':
        // A reference of no payment (valid shape, another payment's digits): kept unmatched.
        await this.credit(record, amount, { reference: 'RF18539007547034' }, 'CREDIT');
        break;
      case 'leave':
        break;
    }
    if (fate === 'leave' || fate === 'otherAmount' || fate === 'unknown') await this.query(shop, record);
    else await this.awaitStatus(shop, record, ['SUCCEEDED'], 60_000);
  }

  private payout(shop: Shop, prefix: string, currency: string, amount: string, payee: Record<string, string>) {
    return {
      merchantOrderNo: this.nextMerchantOrderNo(prefix),
      currency,
      amount,
      webhookUrl: `${shop.receiver.url}/webhook/payout`,
      attach: `chaos ${prefix}`,
      payee,
    };
  }

  private async confirm(shop: Shop, record: OrderRecord): Promise<boolean> {
    const answer = await this.act(shop, record, '/api/v1/payouts/confirm', { orderNo: record.orderNo }, undefined);
    if (answer?.status === 200) record.confirmed = 'ok';
    else if (answer === undefined || answer.status >= 500) record.confirmed = 'unknown';
    return answer?.status === 200;
  }

  private async sandboxPayout(shop: Shop): Promise<void> {
    const { rng } = this.options;
    const record = await this.create(
      shop,
      'PAYOUT',
      'sandbox',
      this.payout(shop, 'SBW', 'BRL', this.amount(1, 50), { name: 'Maria Silva', accountNumber: '12345-6' }),
    );
    if (!record?.orderNo) return;
    await this.think();
    if (!(await this.confirm(shop, record))) return;
    const fate = rng.weighted({ SUCCEEDED: 75, FAILED: 20, leave: 5 });
    if (fate === 'leave') return;
    await this.act(shop, record, '/api/v1/sandbox/payouts/simulate', { orderNo: record.orderNo, status: fate }, fate);
    if (fate === 'SUCCEEDED' && rng.chance(0.3)) {
      await this.think();
      await this.act(shop, record, '/api/v1/sandbox/payouts/return', { orderNo: record.orderNo }, 'RETURN');
    }
    await this.query(shop, record);
  }

  private async pspPayout(shop: Shop): Promise<void> {
    const { rng, controls } = this.options;
    const record = await this.create(
      shop,
      'PAYOUT',
      'psp',
      this.payout(shop, 'PSW', 'MXN', this.amount(10, 200), {
        name: 'Luis Perez',
        accountNumber: '012180001234567897',
      }),
    );
    if (!record?.orderNo) return;
    await this.think();
    if (!(await this.confirm(shop, record))) return;
    const fate = rng.weighted({ SUCCEEDED: 75, FAILED: 20, leave: 5 });
    if (fate === 'leave') return;
    await this.control(
      record,
      `${controls.psp}/control/payouts/complete`,
      { reference: record.orderNo, status: fate },
      fate,
    );
    if (fate === 'SUCCEEDED' && rng.chance(0.3)) {
      await this.awaitStatus(shop, record, ['SUCCEEDED', 'FAILED']);
      await this.control(record, `${controls.psp}/control/payouts/return`, { reference: record.orderNo }, 'RETURN');
      await this.awaitStatus(shop, record, ['REFUNDED', 'FAILED']);
    } else {
      await this.awaitStatus(shop, record, ['SUCCEEDED', 'FAILED']);
    }
  }

  private async bankPayout(shop: Shop): Promise<void> {
    const { rng, controls } = this.options;
    const record = await this.create(
      shop,
      'PAYOUT',
      'bank',
      this.payout(shop, 'SEW', 'EUR', this.amount(1, 300), {
        name: rng.pick(['Jürgen Müller', 'Zoë Dupont', 'Ana María Ruiz', 'Piet de Vries']),
        accountNumber: rng.pick(['DE89370400440532013000', 'FR1420041010050500013M02606', 'NL91ABNA0417164300']),
      }),
    );
    if (!record?.orderNo) return;
    await this.think();
    if (!(await this.confirm(shop, record))) return;
    const fate = rng.weighted({ booked: 70, rejected: 15, returned: 15 });
    if (fate === 'rejected') {
      // Unknown (404) until the file reaches the bank; once booked the bank refuses (409).
      await this.control(
        record,
        `${controls.bank}/control/transfers/reject`,
        { endToEndId: record.orderNo, reason: 'AC01' },
        'FAILED',
        (status) => status === 404,
      );
    }
    const status = await this.awaitStatus(shop, record, ['SUCCEEDED', 'FAILED'], 60_000);
    if (fate === 'returned' && status === 'SUCCEEDED') {
      await this.control(
        record,
        `${controls.bank}/control/transfers/return`,
        { endToEndId: record.orderNo, reason: 'AC04' },
        'RETURN',
      );
      await this.awaitStatus(shop, record, ['REFUNDED'], 60_000);
    }
  }

  private async reads(shop: Shop): Promise<void> {
    const { rng, history } = this.options;
    const now = Date.now();
    const kind = rng.pick(['balances', 'payments', 'payouts', 'receipt'] as const);
    if (kind === 'balances') {
      await this.untilAnswered(() => shop.client.get('/api/v1/balances', ''));
      return;
    }
    if (kind === 'receipt') {
      const payouts = history.orders.filter(
        (order) => order.type === 'PAYOUT' && order.orderNo && order.merchant === shop.client.merchant.accessKey,
      );
      if (payouts.length === 0) return;
      const order = rng.pick(payouts);
      await this.untilAnswered(() => shop.client.get('/api/v1/payouts/receipt', `orderNo=${order.orderNo}`));
      return;
    }
    const path = kind === 'payments' ? '/api/v1/payments/list' : '/api/v1/payouts/list';
    const answer = await this.untilAnswered(() =>
      shop.client.get(path, `from=${now - 120_000}&to=${now + 1000}&pageSize=50`),
    );
    if (answer?.status !== 200) return;
    const items = ((answer.body.data as { items?: { orderNo: string; status: string }[] })?.items ?? []) as {
      orderNo: string;
      status: string;
    }[];
    const byOrderNo = new Map(history.orders.filter((o) => o.orderNo).map((o) => [o.orderNo as string, o]));
    for (const item of items) {
      byOrderNo.get(item.orderNo)?.observations.push({
        status: item.status,
        sentAt: now,
        answeredAt: Date.now(),
        source: 'list',
      });
    }
  }

  /** Money in every currency the shop pays out in, before the flows start. */
  private async fund(shop: Shop): Promise<void> {
    const { controls } = this.options;
    for (const [currency, code, channel] of [
      ['EUR', 'SEPA', 'bank'],
      ['BRL', 'BOLETO', 'psp'],
      ['MXN', 'SPEI', 'psp'],
    ] as const) {
      const record = await this.create(
        shop,
        'PAYMENT',
        channel,
        this.payment(shop, 'FUND', currency, code, '50000.00'),
      );
      if (!record?.orderNo) throw new Error(`funding ${currency} failed`);
      if (channel === 'bank') {
        if (!record.reference) throw new Error(`funding EUR: ${record.orderNo} has no bankTransfer.reference`);
        await this.credit(record, '50000.00', { reference: record.reference }, 'SUCCEEDED');
      } else {
        await this.control(
          record,
          `${controls.psp}/control/payments/complete`,
          { reference: record.orderNo, status: 'SUCCEEDED' },
          'SUCCEEDED',
        );
      }
      const status = await this.awaitStatus(shop, record, ['SUCCEEDED'], 60_000);
      if (status !== 'SUCCEEDED') throw new Error(`funding ${currency} did not succeed (${status})`);
    }
  }
}
