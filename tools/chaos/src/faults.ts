/**
 * Injecting the scheduled faults and measuring recovery. A lane takes its faults in order: it
 * injects one, heals it after its duration, then probes what the fault took away until it works
 * again (the time to recover, from the heal), bounded; then pauses for the next one's gap.
 *
 * The probes, by what a kind takes away:
 * - serving (API instances, the database): a signed create through HAProxy answered 200, and for
 *   an API instance HAProxy routing to it again;
 * - delivering (workers): a payment made final now has its webhook at an always-healthy receiver;
 * - a channel (a simulator killed or its link faulted): a create routed to it answered 200 (the
 *   channel is called before the create answers); for the bank, every file built before the heal
 *   uploaded to it;
 * - the bank holding its answers, or booking each file as one debit (a batch booking): every
 *   payout it booked before the heal is final on the platform;
 * - a receiver: every event of its merchant created before the heal delivered.
 */
import type { Pool } from 'pg';
import type { MerchantClient } from './client.js';
import type { FaultRecord, History } from './history.js';
import type { Receiver } from './receivers.js';
import type { FaultKind, Schedule, ScheduledFault } from './schedule.js';
import type { Topology } from './topology.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface FaultContext {
  readonly topology: Topology;
  readonly history: History;
  /** The probing merchant, whose receiver never misbehaves. */
  readonly probe: { readonly client: MerchantClient; readonly receiver: Receiver };
  readonly receivers: readonly Receiver[];
  /** merchant access key → its id in the database. */
  readonly merchantIds: ReadonlyMap<string, string>;
  readonly db: Pool;
  readonly recoveryBoundMs: number;
  readonly log: (line: string) => void;
}

/** Exits the campaign caused, per process name (the checker allows exactly these). */
export const causedExits = new Map<string, number>();
const caused = (name: string) => causedExits.set(name, (causedExits.get(name) ?? 0) + 1);

export class FaultRunner {
  private stopping = false;
  private lanes: Promise<void>[] = [];
  private nextId = 1;

  constructor(private readonly context: FaultContext) {}

  start(schedule: Schedule): void {
    this.lanes = [this.lane(schedule.platform), this.lane(schedule.receivers)];
  }

  /** Lets the fault in progress heal and recover, then stops each lane. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.lanes);
  }

  private async lane(faults: readonly ScheduledFault[]): Promise<void> {
    for (const fault of faults) {
      await this.pause(fault.gapMs);
      if (this.stopping) return;
      await this.run(fault).catch((error: unknown) => {
        this.context.history.anomaly(`fault ${fault.kind} ${fault.target}: ${(error as Error).stack ?? String(error)}`);
      });
    }
  }

  private async pause(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopping && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }

  private async run(fault: ScheduledFault): Promise<void> {
    const { history, log } = this.context;
    const record: FaultRecord = {
      id: this.nextId++,
      kind: fault.kind,
      target: fault.target,
      startedAt: Date.now(),
      detail: fault.parameter ? { parameter: fault.parameter } : {},
    };
    history.faults.push(record);
    log(`fault ${record.id}: ${fault.kind}${fault.target ? ` ${fault.target}` : ''} for ${fault.durationMs} ms`);
    const heal = await this.inject(fault, record);
    await sleep(fault.durationMs);
    await heal();
    record.healedAt = Date.now();
    const probe = this.probeFor(fault.kind, fault.target, record.healedAt);
    const deadline = record.healedAt + this.context.recoveryBoundMs;
    for (;;) {
      const ok = await probe().catch(() => false);
      if (ok) {
        record.recoveredAt = Date.now();
        break;
      }
      if (Date.now() > deadline) {
        record.unrecovered = `not recovered within ${this.context.recoveryBoundMs} ms of the heal`;
        break;
      }
      await sleep(250);
    }
    log(
      `fault ${record.id}: healed, ${record.recoveredAt ? `recovered in ${record.recoveredAt - record.healedAt} ms` : record.unrecovered}`,
    );
  }

  /** Injects the fault; resolves the heal. */
  private async inject(fault: ScheduledFault, record: FaultRecord): Promise<() => Promise<void>> {
    const { topology, receivers } = this.context;
    const { cluster, postgres, simulators } = topology;
    const proc = [...cluster.apis, ...cluster.workers].find((p) => p.name === fault.target);
    switch (fault.kind) {
      case 'api-kill':
      case 'worker-kill': {
        if (!proc) throw new Error(`no process ${fault.target}`);
        caused(proc.name);
        await proc.stop('SIGKILL');
        return async () => {
          await proc.start(120_000);
          if (proc.kind === 'api') await cluster.waitRouted(60_000).catch(() => {});
        };
      }
      case 'api-pause':
      case 'worker-pause': {
        if (!proc?.child) throw new Error(`no process ${fault.target}`);
        const child = proc.child;
        child.kill('SIGSTOP');
        return async () => {
          child.kill('SIGCONT');
        };
      }
      case 'pg-terminate': {
        record.detail.terminated = await postgres.terminatePlatformBackends();
        return async () => {};
      }
      case 'pg-restart-fast':
      case 'pg-restart-immediate': {
        await postgres.shutdown(fault.kind === 'pg-restart-fast' ? 'fast' : 'immediate');
        return () => postgres.start();
      }
      case 'simulator-kill': {
        const simulator = simulators[fault.target as 'psp' | 'pix' | 'bank'];
        await simulator.kill('SIGKILL');
        return () => simulator.start();
      }
      case 'net-delay':
      case 'net-blackhole':
      case 'net-reset': {
        const { proxy } = simulators[fault.target as 'psp' | 'pix' | 'bank'];
        proxy.setMode(
          fault.kind === 'net-delay'
            ? { kind: 'delay', ms: fault.parameter }
            : fault.kind === 'net-blackhole'
              ? { kind: 'blackhole' }
              : { kind: 'reset' },
        );
        return async () => proxy.setMode({ kind: 'pass' });
      }
      case 'bank-hold': {
        await this.bankBooking('hold');
        return () => this.bankBooking('release');
      }
      case 'bank-batch': {
        // Not a failure but a bank's way: every file taken meanwhile booked as one debit.
        await this.bankControl('/control/customer', { batchBooking: true });
        return () => this.bankControl('/control/customer', { batchBooking: false });
      }
      case 'receiver-5xx':
      case 'receiver-timeout':
      case 'receiver-cut': {
        const receiver = receivers[Number(fault.target)] as Receiver;
        receiver.setMode(fault.kind === 'receiver-5xx' ? '5xx' : fault.kind === 'receiver-timeout' ? 'timeout' : 'cut');
        return async () => receiver.setMode('ok');
      }
    }
  }

  private bankBooking(mode: 'hold' | 'release'): Promise<void> {
    return this.bankControl('/control/booking', { mode });
  }

  /** A control of paygate-bank, sent until the bank takes it (it may be starting again). */
  private async bankControl(path: string, body: Record<string, unknown>): Promise<void> {
    const url = `${this.context.topology.simulators.bank.controlUrl}${path}`;
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5000),
        });
        if (response.status === 200) return;
      } catch {
        // the bank is starting again
      }
      if (attempt > 60) throw new Error(`the bank did not take ${path} ${JSON.stringify(body)}`);
      await sleep(500);
    }
  }

  private probeFor(kind: FaultKind, target: string, healedAt: number): () => Promise<boolean> {
    const { topology, db, merchantIds, receivers } = this.context;
    switch (kind) {
      case 'api-kill':
      case 'api-pause':
        return async () =>
          (await topology.cluster.backendStates())[target] === 'UP' && (await this.createWorks('USD', 'CARD'));
      case 'pg-terminate':
      case 'pg-restart-fast':
      case 'pg-restart-immediate':
        return () => this.createWorks('USD', 'CARD');
      case 'worker-kill':
      case 'worker-pause':
        return () => this.deliveryWorks();
      case 'simulator-kill':
      case 'net-delay':
      case 'net-blackhole':
      case 'net-reset':
        if (target === 'psp') return () => this.createWorks('MXN', 'SPEI');
        if (target === 'pix') return () => this.createWorks('BRL', 'PIX');
        return async () => {
          const waiting = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM sepa_files WHERE state = 'built' AND created_at < $1`,
            [new Date(healedAt)],
          );
          return waiting.rows[0]?.n === 0;
        };
      case 'bank-hold':
      case 'bank-batch':
        return async () => {
          const response = await fetch(`${topology.simulators.bank.controlUrl}/control/transfers`, {
            signal: AbortSignal.timeout(5000),
          });
          const { transfers } = (await response.json()) as {
            transfers: { endToEndId: string; status: string; bookedAt?: number }[];
          };
          const held = transfers
            .filter((t) => t.status === 'booked' && (t.bookedAt ?? 0) < healedAt)
            .map((t) => t.endToEndId);
          if (held.length === 0) return true;
          const open = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM payouts WHERE order_no = ANY($1) AND status IN ('PENDING', 'PROCESSING')`,
            [held],
          );
          return open.rows[0]?.n === 0;
        };
      case 'receiver-5xx':
      case 'receiver-timeout':
      case 'receiver-cut': {
        const receiver = receivers[Number(target)] as Receiver;
        const merchantId = merchantIds.get(receiver.merchant);
        return async () => {
          const pending = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM events
              WHERE merchant_id = $1 AND created_at < $2 AND delivery_status <> 'delivered'`,
            [merchantId, new Date(healedAt)],
          );
          return pending.rows[0]?.n === 0;
        };
      }
    }
  }

  /** A create through HAProxy, by the probing merchant, answered 200. */
  private async createWorks(currency: string, code: string): Promise<boolean> {
    const { client, receiver } = this.context.probe;
    const answer = await client.post('/api/v1/payments', {
      merchantOrderNo: `PROBE-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      currency,
      amount: '1.00',
      paymentMethod: { code },
      webhookUrl: `${receiver.url}/webhook/payment`,
    });
    return answer?.status === 200;
  }

  /** A sandbox payment made final now reaches the probing merchant's receiver within 15 s. */
  private async deliveryWorks(): Promise<boolean> {
    const { client, receiver } = this.context.probe;
    const created = await client.post('/api/v1/payments', {
      merchantOrderNo: `PROBE-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      currency: 'USD',
      amount: '1.00',
      paymentMethod: { code: 'CARD' },
      webhookUrl: `${receiver.url}/webhook/payment`,
    });
    const orderNo = (created?.body.data as { orderNo?: string } | undefined)?.orderNo;
    if (created?.status !== 200 || !orderNo) return false;
    const settled = await client.post('/api/v1/sandbox/payments/simulate', { orderNo, status: 'SUCCEEDED' });
    if (settled?.status !== 200) return false;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (receiver.deliveries.some((d) => d.body.includes(Buffer.from(`"orderNo":"${orderNo}"`)))) return true;
      await sleep(100);
    }
    return false;
  }
}
