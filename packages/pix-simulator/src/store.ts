import { JournalStore } from '@paygate/simulator-kit';
import type { CobRecord, NotificationMode, OutboxEntry, WebhookRecord } from './model.js';

/** One change to the state; a transaction is a list of them, written as one journal line. */
export type Change =
  | { readonly t: 'cob'; readonly v: CobRecord }
  | { readonly t: 'webhook'; readonly v: WebhookRecord }
  | { readonly t: 'webhook-deleted'; readonly chave: string }
  | { readonly t: 'outbox'; readonly v: OutboxEntry }
  | { readonly t: 'outbox-done'; readonly key: string }
  | { readonly t: 'mode'; readonly v: NotificationMode }
  | { readonly t: 'token-epoch'; readonly v: number };

interface Snapshot {
  readonly version: 1;
  readonly cobs: CobRecord[];
  readonly webhooks: WebhookRecord[];
  readonly outbox: OutboxEntry[];
  readonly mode: NotificationMode;
  readonly tokenEpoch: number;
}

/**
 * The simulator's state: in memory, made durable by the kit's journal (one JSON line per
 * transaction, fsynced before anyone is answered, over an atomically replaced snapshot; a restart
 * after a clean stop or a kill -9 replays it, a torn last line is dropped). The caller holds the
 * directory's lock (`createSimulator` takes it first).
 */
export class Store extends JournalStore<Change, Snapshot> {
  readonly cobs = new Map<string, CobRecord>();
  readonly webhooks = new Map<string, WebhookRecord>();
  readonly outbox = new Map<string, OutboxEntry>();
  mode: NotificationMode = 'normal';
  /** Tokens issued under an older epoch are revoked. */
  tokenEpoch = 0;

  constructor(dir: string) {
    super(dir);
    this.open();
  }

  protected override snapshot(): Snapshot {
    return {
      version: 1,
      cobs: [...this.cobs.values()],
      webhooks: [...this.webhooks.values()],
      outbox: [...this.outbox.values()],
      mode: this.mode,
      tokenEpoch: this.tokenEpoch,
    };
  }

  protected override restore(snapshot: Snapshot): void {
    for (const v of snapshot.cobs) this.apply({ t: 'cob', v });
    for (const v of snapshot.webhooks) this.apply({ t: 'webhook', v });
    for (const v of snapshot.outbox) this.apply({ t: 'outbox', v });
    this.mode = snapshot.mode;
    this.tokenEpoch = snapshot.tokenEpoch;
  }

  protected override apply(change: Change): void {
    switch (change.t) {
      case 'cob':
        this.cobs.set(change.v.txid, change.v);
        break;
      case 'webhook':
        this.webhooks.set(change.v.chave, change.v);
        break;
      case 'webhook-deleted':
        this.webhooks.delete(change.chave);
        break;
      case 'outbox':
        this.outbox.set(change.v.key, change.v);
        break;
      case 'outbox-done':
        this.outbox.delete(change.key);
        break;
      case 'mode':
        this.mode = change.v;
        break;
      case 'token-epoch':
        this.tokenEpoch = change.v;
        break;
    }
  }
}
