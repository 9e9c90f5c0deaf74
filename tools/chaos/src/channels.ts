/**
 * The channels' own word on each order, asked the way the platform asks them (the checker's
 * source of truth for "every final state is the channel's"): paygate-psp's authenticated API,
 * the API Pix of paygate-pix over mTLS with an OAuth token, and paygate-bank's record of every
 * transfer and file.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { sign } from '@paygate/psp-simulator/auth';
import type { PixChannel } from './topology.js';

/** The platform status a channel's record stands for; undefined: the channel has none. */
export type ChannelVerdict = string | undefined;

export class PspView {
  constructor(
    private readonly baseUrl: string,
    private readonly secret: string,
  ) {}

  private async get(target: string): Promise<Record<string, unknown> | undefined> {
    const headers = sign(
      this.secret,
      { method: 'GET', path: target, body: '' },
      { now: Date.now(), nonce: randomUUID() },
    );
    const response = await fetch(`${this.baseUrl}${target}`, { headers, signal: AbortSignal.timeout(10_000) });
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new Error(`psp ${target}: ${response.status}`);
    return (await response.json()) as Record<string, unknown>;
  }

  async payment(orderNo: string): Promise<ChannelVerdict> {
    const charge = await this.get(`/v1/charges?reference=${orderNo}`);
    switch (charge?.status) {
      case 'paid':
        return 'SUCCEEDED';
      case 'declined':
        return 'FAILED';
      case 'open':
        return 'PENDING';
      case 'expired':
        return 'EXPIRED';
      case 'canceled':
        // The platform cancels the charge for a merchant's cancel and for its own expiry alike.
        return 'CANCELED|EXPIRED';
      default:
        return undefined;
    }
  }

  async payout(orderNo: string): Promise<ChannelVerdict> {
    const transfer = await this.get(`/v1/transfers?reference=${orderNo}`);
    switch (transfer?.status) {
      case 'sent':
        return 'SUCCEEDED';
      case 'rejected':
      case 'canceled':
        return 'FAILED';
      case 'returned':
        return 'REFUNDED';
      case 'queued':
        return 'PROCESSING';
      default:
        return undefined;
    }
  }
}

export class PixView {
  private token: string | undefined;
  private readonly tls: { cert: Buffer; key: Buffer; ca: Buffer };

  constructor(private readonly channel: PixChannel) {
    this.tls = {
      cert: readFileSync(channel.certFile),
      key: readFileSync(channel.keyFile),
      ca: readFileSync(channel.caFile),
    };
  }

  private call(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { ...init, ...this.tls, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(init.body);
    });
  }

  private async bearer(): Promise<string> {
    if (this.token) return this.token;
    const basic = Buffer.from(`${this.channel.clientId}:${this.channel.clientSecret}`).toString('base64');
    const answer = await this.call(this.channel.tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=cob.read',
    });
    if (answer.status !== 200) throw new Error(`pix token: ${answer.status}`);
    this.token = answer.json.access_token as string;
    return this.token;
  }

  async payment(txid: string | undefined): Promise<ChannelVerdict> {
    if (!txid) return undefined;
    const answer = await this.call(`${this.channel.baseUrl}/cob/${txid}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${await this.bearer()}` },
    });
    if (answer.status === 404) return undefined;
    if (answer.status !== 200) throw new Error(`pix cob ${txid}: ${answer.status}`);
    switch (answer.json.status) {
      case 'CONCLUIDA':
        return 'SUCCEEDED';
      case 'REMOVIDA_PELO_PSP':
        return 'FAILED';
      case 'REMOVIDA_PELO_USUARIO_RECEBEDOR':
        return 'CANCELED|EXPIRED';
      case 'ATIVA':
        return 'PENDING';
      default:
        return undefined;
    }
  }
}

/** paygate-bank's record: every transfer of every file it took, and every upload. */
export interface BankView {
  readonly transfers: {
    endToEndId: string;
    msgId: string;
    status: 'accepted' | 'booked' | 'rejected';
    reported: boolean;
    amount: string;
    returns: { amount: string }[];
  }[];
  readonly uploads: { name: string; msgId: string; outcome: 'accepted' | 'rejected' | 'repeated'; reason?: string }[];
  /** The account's received credit transfers (`PMNT`/`RCDT` entries): the payers' transfers the bank booked. */
  readonly credits: BankCredit[];
}

export interface BankCredit {
  /** `AcctSvcrRef`. */
  readonly ref: string;
  readonly amount: string;
  readonly bookedAt: number;
  /** The structured references and the unstructured texts of its transaction, as sent. */
  readonly references: readonly string[];
  readonly texts: readonly string[];
}

export async function bankView(controlUrl: string): Promise<BankView> {
  const get = async (path: string) =>
    (await (await fetch(`${controlUrl}${path}`, { signal: AbortSignal.timeout(10_000) })).json()) as Record<
      string,
      unknown
    >;
  const [transfers, files, entries] = await Promise.all([
    get('/control/transfers'),
    get('/control/files'),
    get('/control/entries'),
  ]);
  type Entry = {
    ref: string;
    creditDebit: string;
    amount: string;
    bookedAt: number;
    entry: {
      bankTransactionCode?: { domain?: string; family?: string };
      transactions?: { creditorReferences?: string[]; unstructuredRemittance?: string[] }[];
    };
  };
  // Received credit transfers (PMNT/RCDT), not the returns of payouts (PMNT/ICDT/RRTN).
  const credits = (entries.entries as Entry[])
    .filter(
      (e) =>
        e.creditDebit === 'CRDT' &&
        e.entry.bankTransactionCode?.domain === 'PMNT' &&
        e.entry.bankTransactionCode.family === 'RCDT',
    )
    .map((e) => ({
      ref: e.ref,
      amount: e.amount,
      bookedAt: e.bookedAt,
      references: (e.entry.transactions ?? []).flatMap((t) => t.creditorReferences ?? []),
      texts: (e.entry.transactions ?? []).flatMap((t) => t.unstructuredRemittance ?? []),
    }));
  return {
    transfers: transfers.transfers as BankView['transfers'],
    uploads: files.uploads as BankView['uploads'],
    credits,
  };
}

const compact = (text: string) => text.replace(/\s+/g, '').toUpperCase();

/** The bank's credits that name `reference`, structured or within the text (without spaces and case). */
export function creditsFor(view: BankView, reference: string): BankCredit[] {
  const wanted = compact(reference);
  return view.credits.filter(
    (c) => c.references.some((r) => compact(r) === wanted) || c.texts.some((t) => compact(t).includes(wanted)),
  );
}

/**
 * The platform status a payment by bank transfer must have, by the bank's credits: SUCCEEDED once
 * a credit of its amount was booked while it was open, else PENDING or EXPIRED. A credit booked
 * within `marginMs` of the expiry may be read after it (then it is an unmatched credit, the payment
 * EXPIRED): either is the channel's word.
 */
export function bankPaymentVerdict(
  view: BankView,
  reference: string,
  amount: string,
  expiresAt: number,
  marginMs: number,
): ChannelVerdict {
  const paid = creditsFor(view, reference).filter((c) => c.amount === amount);
  const first = paid.sort((a, b) => a.bookedAt - b.bookedAt)[0];
  if (first === undefined) return 'PENDING|EXPIRED';
  if (first.bookedAt < expiresAt - marginMs) return 'SUCCEEDED';
  return first.bookedAt < expiresAt ? 'SUCCEEDED|EXPIRED' : 'EXPIRED';
}

/** The platform status the bank's record of a payout stands for. */
export function bankVerdict(view: BankView, orderNo: string): ChannelVerdict {
  const accepted = new Set(view.uploads.filter((u) => u.outcome === 'accepted').map((u) => u.msgId));
  const transfers = view.transfers.filter((t) => t.endToEndId === orderNo && accepted.has(t.msgId));
  const transfer = transfers[0];
  if (!transfer) return undefined;
  if (transfer.status === 'rejected') return 'FAILED';
  if (transfer.status === 'accepted') return 'PROCESSING';
  if (transfer.returns.some((r) => r.amount === transfer.amount)) return 'REFUNDED';
  return transfer.reported ? 'SUCCEEDED' : 'PROCESSING';
}
