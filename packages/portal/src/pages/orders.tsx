import { type ReactNode, useState } from 'react';
import { useAction } from '../action';
import { api, API_BASE, queryString } from '../api';
import {
  ActionStatus,
  Card,
  Details,
  Field,
  LoadStatus,
  PageHeading,
  StatusBadge,
  Time,
  useAsync,
} from '../components';
import { formatMoney, PAYMENT_STATUSES, PAYOUT_STATUSES } from '../format';
import { FilterForm, LinkedRow, listQuery, OrderLink, Pager, TotalLine, useListState } from '../lists';
import { ResendButton, useResend } from '../resend';
import { Link, usePageTitle } from '../router';
import { useCan } from '../session';
import { DataTable } from '../table';
import type { CountedPage, Payment, PaymentDetail, Payout, PayoutDetail, TimelineEntry, WebhookEvent } from '../types';

/** What the ISO 20022 payment status codes a bank sends in its pain.002 mean (ExternalPaymentTransactionStatus1Code). */
const BANK_STATUS_MEANING: Readonly<Record<string, string>> = {
  RCVD: 'received by the bank',
  ACTC: 'accepted after technical validation',
  ACCP: 'accepted for payment (customer profile checked)',
  ACSP: 'accepted, settlement in process',
  ACWC: 'accepted with changes',
  PDNG: 'pending: further checks before it is processed',
  PART: 'partly accepted',
  ACSC: 'accepted and settled',
  ACCC: 'settled on the payee’s account',
  RJCT: 'rejected',
};

/** What differs between the payments and the payouts list: the rest of the page is the same. */
interface OrderListKind<T extends Payment | Payout> {
  readonly title: 'Payments' | 'Payouts';
  readonly noun: string;
  readonly path: '/payments' | '/payouts';
  readonly statuses: readonly string[];
  readonly searchHint: string;
  /** The one column in which the kinds differ: the method of a payment, the fee of a payout. */
  readonly extra: { readonly heading: string; readonly numeric: boolean; readonly cell: (order: T) => ReactNode };
}

const PAYMENTS_LIST: OrderListKind<Payment> = {
  title: 'Payments',
  noun: 'payments',
  path: '/payments',
  statuses: PAYMENT_STATUSES,
  searchHint: 'A payment number (P…), your merchantOrderNo, the payer’s name or document number, or an amount.',
  extra: { heading: 'Method', numeric: false, cell: (p) => p.paymentMethod.code },
};

const PAYOUTS_LIST: OrderListKind<Payout> = {
  title: 'Payouts',
  noun: 'payouts',
  path: '/payouts',
  statuses: PAYOUT_STATUSES,
  searchHint: 'A payout number (W…), your merchantOrderNo, the payee’s name or document number, or an amount.',
  extra: { heading: 'Fee', numeric: true, cell: (p) => formatMoney(p.fee, p.currency) },
};

/** A list's report (CSV): its orders of the filters' period (the last 31 days without one); owner and finance. */
function ReportLink({
  path,
  from,
  to,
}: {
  path: '/payments' | '/payouts';
  from: number | undefined;
  to: number | undefined;
}) {
  const href = `${API_BASE}${path}/report.csv${queryString({ from, to })}`;
  if (!useCan('exports')) return null;
  return path === '/payouts' ? (
    <p>
      <a className="button" href={href} download>
        Download the payouts report (CSV)
      </a>{' '}
      <span className="hint inline-hint">
        Every payout created in the period (the From and To filters; the last 31 days without them) with its fee, total,
        return and what it took from your balance.
      </span>
    </p>
  ) : (
    <p>
      <a className="button" href={href} download>
        Download the payments report (CSV)
      </a>{' '}
      <span className="hint inline-hint">
        Every payment created in the period (the From and To filters; the last 31 days without them) with its status,
        amount, what was paid and when it became final.
      </span>
    </p>
  );
}

export const PaymentsPage = () => <OrderListPage kind={PAYMENTS_LIST} />;
export const PayoutsPage = () => <OrderListPage kind={PAYOUTS_LIST} />;

function OrderListPage<T extends Payment | Payout>({ kind }: { kind: OrderListKind<T> }) {
  usePageTitle(kind.title);
  const list = useListState();
  const { data, error, loading } = useAsync(
    () => api.get<CountedPage<T>>(`${kind.path}${listQuery(list.filters, list.cursor)}`),
    [kind.path, list.key, list.cursor],
  );
  const extraClass = kind.extra.numeric ? 'num hide-narrow' : 'hide-narrow';
  return (
    <>
      <PageHeading>{kind.title}</PageHeading>
      <FilterForm
        path={kind.path}
        label={`Filter ${kind.noun}`}
        filters={list.filters}
        statuses={kind.statuses}
        searchHint={kind.searchHint}
      />
      <ReportLink path={kind.path} from={list.filters.from} to={list.filters.to} />
      <LoadStatus state={{ data, error, loading }} what={kind.noun} />
      {data ? (
        <>
          <TotalLine total={data.total} noun={kind.noun} />
          <DataTable
            label={kind.title}
            caption={`${kind.title}, newest first`}
            captionHidden
            busy={loading}
            columns={[
              'Order',
              { heading: 'Your reference', className: 'hide-narrow' },
              { heading: 'Amount', className: 'num' },
              { heading: kind.extra.heading, className: extraClass },
              { heading: 'Status', className: 'hide-narrow' },
              { heading: 'Created', className: 'hide-narrow' },
            ]}
          >
            {data.items.map((order) => (
              <LinkedRow key={order.orderNo} to={`${kind.path}/${order.orderNo}`}>
                <th scope="row">
                  <OrderLink orderNo={order.orderNo} />
                </th>
                <td className="mono hide-narrow">{order.merchantOrderNo}</td>
                <td className="num">
                  {formatMoney(order.amount, order.currency)}
                  {/* On a phone the status column gives way and the status shows here. */}
                  <span className="show-narrow">
                    <StatusBadge status={order.status} />
                  </span>
                </td>
                <td className={extraClass}>{kind.extra.cell(order)}</td>
                <td className="hide-narrow">
                  <StatusBadge status={order.status} />
                </td>
                <td className="hide-narrow">
                  <Time ms={order.createdAt} />
                </td>
              </LinkedRow>
            ))}
          </DataTable>
          {data.items.length === 0 ? <p className="empty">No {kind.noun} match these filters.</p> : null}
          <Pager
            pageNumber={list.pageNumber}
            nextCursor={data.nextCursor}
            onNext={list.next}
            onPrevious={list.previous}
          />
        </>
      ) : null}
    </>
  );
}

function Timeline({ entries }: { entries: readonly TimelineEntry[] }) {
  return (
    <ol className="timeline">
      {entries.map((entry, i) => (
        <li key={`${entry.at}-${i}`}>
          <StatusBadge status={entry.status} /> <span>{entry.label}</span>
          <br />
          <Time ms={entry.at} />
        </li>
      ))}
    </ol>
  );
}

function EventsSection({ events, reload }: { events: readonly WebhookEvent[]; reload: () => void }) {
  const canResend = useCan('webhooks');
  const resender = useResend(
    reload,
    (eventId) => `Event ${eventId} is being sent again. Its attempts are listed below.`,
  );
  return (
    <Card id="events" title="Webhook events">
      <ActionStatus action={resender} />
      {events.length === 0 ? (
        <p className="empty">No webhook yet: events are sent only when the order reaches a final state.</p>
      ) : null}
      {events.map((event) => (
        <article key={event.eventId} className="event" aria-labelledby={`event-${event.eventId}`}>
          <header className="event-head">
            <h3 id={`event-${event.eventId}`} className="mono">
              {event.eventId}
            </h3>
            <StatusBadge status={event.status} />
            <span>
              Delivery: <StatusBadge status={event.delivery} />
            </span>
            {canResend ? <ResendButton eventId={event.eventId} resender={resender} /> : null}
          </header>
          <Details
            items={[
              ['Created', <Time key="c" ms={event.createdAt} />],
              ['Sent to', <span className="mono break">{event.webhookUrl}</span>],
              ['Next attempt', event.nextAttemptAt ? <Time ms={event.nextAttemptAt} /> : undefined],
            ]}
          />
          <details>
            <summary>Body (exact bytes, identical on every attempt)</summary>
            <pre className="code" tabIndex={0} aria-label={`Body of ${event.eventId}`}>
              {event.body}
            </pre>
          </details>
          <DataTable
            label={`Delivery attempts of ${event.eventId}`}
            className="attempts"
            caption={`Delivery attempts (${event.attempts.length})`}
            columns={['Time', 'HTTP status', { heading: 'Latency', className: 'num' }, 'Response (excerpt)']}
          >
            {event.attempts.map((attempt, i) => (
              <tr key={`${attempt.at}-${i}`}>
                <td>
                  <Time ms={attempt.at} />
                </td>
                <td>
                  {attempt.statusCode === null ? (
                    <span className="badge badge-bad">no response</span>
                  ) : (
                    <span
                      className={`badge badge-${attempt.statusCode >= 200 && attempt.statusCode < 300 ? 'good' : 'bad'}`}
                    >
                      {attempt.statusCode}
                    </span>
                  )}
                </td>
                <td className="num">{attempt.latencyMs === null ? '—' : `${attempt.latencyMs} ms`}</td>
                <td>
                  <code className="excerpt">{attempt.error ?? attempt.responseExcerpt ?? ''}</code>
                </td>
              </tr>
            ))}
          </DataTable>
          {event.attempts.length === 0 ? <p className="muted">Not attempted yet.</p> : null}
        </article>
      ))}
    </Card>
  );
}

/** Where a sandbox order can go from each status, as the channel (simulate helpers) would move it. */
const PAYMENT_MOVES: Readonly<Record<string, readonly string[]>> = {
  PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED', 'EXPIRED'],
  PROCESSING: ['SUCCEEDED', 'FAILED'],
};
const PAYOUT_MOVES: Readonly<Record<string, readonly string[]>> = {
  PENDING: ['PROCESSING', 'SUCCEEDED', 'FAILED'],
  PROCESSING: ['SUCCEEDED', 'FAILED'],
};

/** A write on an order's page: once it went through, the order is loaded again to show its effect. */
function useOrderAction(reload: () => void) {
  const action = useAction();
  const act = (write: () => Promise<unknown>, done: string) =>
    void action.run(async () => {
      await write();
      reload();
      return done;
    });
  return { ...action, act };
}

/**
 * Sandbox only: buttons that act as the channel (the same service calls as the API's
 * /api/v1/sandbox helpers), for driving an order to each state while integrating.
 */
function SandboxPanel({
  type,
  orderNo,
  status,
  reload,
}: {
  type: 'payment' | 'payout';
  orderNo: string;
  status: string;
  reload: () => void;
}) {
  const action = useOrderAction(reload);
  const [reason, setReason] = useState('');
  const moves = (type === 'payment' ? PAYMENT_MOVES : PAYOUT_MOVES)[status] ?? [];
  const base = `/sandbox/${type}s/${encodeURIComponent(orderNo)}`;
  const simulate = (target: string) =>
    action.act(
      () =>
        api.post(`${base}/simulate`, {
          status: target,
          ...(target === 'FAILED' && reason.trim() !== '' ? { failureReason: reason.trim() } : {}),
        }),
      `The ${type} is now ${target}.`,
    );
  const canReturn = type === 'payout' && status === 'SUCCEEDED';
  return (
    <Card id="sandbox" title="Sandbox: act as the channel" className="sandbox-panel">
      <p className="muted">
        These buttons move the {type} as the channel would (like POST /api/v1/sandbox/{type}s/simulate): the webhook
        event is written and sent as in production.
      </p>
      {moves.length === 0 && !canReturn ? (
        <p className="muted">This {type} is final: the channel cannot move it any more.</p>
      ) : null}
      {moves.includes('FAILED') && type === 'payment' ? (
        <Field label="Failure reason (optional)">
          {(props) => (
            <input
              {...props}
              type="text"
              maxLength={200}
              value={reason}
              onChange={(event) => setReason(event.target.value)}
            />
          )}
        </Field>
      ) : null}
      <div className="button-row">
        {moves.map((target) => (
          <button key={target} type="button" className="button" disabled={action.busy} onClick={() => simulate(target)}>
            Simulate {target}
          </button>
        ))}
        {canReturn ? (
          <button
            type="button"
            className="button"
            disabled={action.busy}
            onClick={() => action.act(() => api.post(`${base}/return`, {}), 'The payout was returned (REFUNDED).')}
          >
            Simulate return (REFUNDED)
          </button>
        ) : null}
      </div>
      <ActionStatus action={action} />
    </Card>
  );
}

/** Cancel a PENDING payment, after a second, explicit confirmation. */
function CancelPayment({ orderNo, status, reload }: { orderNo: string; status: string; reload: () => void }) {
  const action = useOrderAction(reload);
  const [asking, setAsking] = useState(false);
  return (
    <div className="cancel">
      {status !== 'PENDING' ? null : asking ? (
        <div className="button-row" role="group" aria-label="Confirm cancel">
          <span>Cancel this payment? The payer can no longer pay it.</span>
          <button
            type="button"
            className="button button-danger button-small"
            disabled={action.busy}
            onClick={() =>
              action.act(() => api.post(`/payments/${encodeURIComponent(orderNo)}/cancel`), 'The payment was canceled.')
            }
          >
            Yes, cancel it
          </button>
          <button type="button" className="button button-small" onClick={() => setAsking(false)}>
            Keep it
          </button>
        </div>
      ) : (
        <button type="button" className="button button-small" onClick={() => setAsking(true)}>
          Cancel payment
        </button>
      )}
      <ActionStatus action={action} />
    </div>
  );
}

export function PaymentPage({ orderNo, sandbox }: { orderNo: string; sandbox: boolean }) {
  usePageTitle(`Payment ${orderNo}`);
  const canCancel = useCan('payments');
  const canSimulate = useCan('debugger');
  const { data, error, loading, reload } = useAsync(
    () => api.get<PaymentDetail>(`/payments/${encodeURIComponent(orderNo)}`),
    [orderNo],
  );
  const p = data?.payment;
  return (
    <>
      <p className="crumbs">
        <Link to="/payments">← Payments</Link>
      </p>
      <PageHeading>
        Payment <span className="mono">{orderNo}</span>
      </PageHeading>
      <LoadStatus state={{ data, error, loading }} what="the payment" />
      {p && data ? (
        <>
          <div className="toolbar">
            <StatusBadge status={p.status} />
            <button type="button" className="button button-small" onClick={reload}>
              Refresh
            </button>
            {canCancel ? <CancelPayment orderNo={orderNo} status={p.status} reload={reload} /> : null}
          </div>
          <div className="grid-2">
            <Card id="summary" title="Order">
              <Details
                items={[
                  ['Status', <StatusBadge status={p.status} />],
                  ['Amount', formatMoney(p.amount, p.currency)],
                  ['Paid amount', p.paidAmount ? formatMoney(p.paidAmount, p.currency) : undefined],
                  [
                    data.charges.booked ? 'Fee' : 'Fee (if paid)',
                    <span data-testid="fee">{formatMoney(data.charges.fee, p.currency)}</span>,
                  ],
                  [
                    data.charges.booked ? 'Net to you' : 'Net (if paid)',
                    <span data-testid="net">{formatMoney(data.charges.net, p.currency)}</span>,
                  ],
                  [
                    'Failure reason',
                    p.status === 'FAILED' ? (
                      <span data-testid="failure-reason">{data.failureReason ?? 'Not given by the channel'}</span>
                    ) : undefined,
                  ],
                  ['Method', p.paymentMethod.code],
                  ['Your reference', <span className="mono">{p.merchantOrderNo}</span>],
                  ['Channel trade no.', p.channelTradeNo],
                  ['Payer name', p.payer?.name],
                  ['Payer document', p.payer?.documentNumber],
                  ['Attach', p.attach],
                  ['Webhook URL', <span className="mono break">{p.webhookUrl}</span>],
                  ['Created', <Time ms={p.createdAt} />],
                  ['Expires', p.status === 'PENDING' ? <Time ms={p.expiresAt} /> : undefined],
                  ['Final since', p.finalizedAt ? <Time ms={p.finalizedAt} /> : undefined],
                  [
                    'Cashier page',
                    p.status === 'PENDING' ? (
                      <a href={p.cashierUrl} target="_blank" rel="noreferrer">
                        Open the cashier page<span className="visually-hidden"> (new tab)</span>
                      </a>
                    ) : undefined,
                  ],
                ]}
              />
            </Card>
            <Card id="timeline" title="Timeline">
              <Timeline entries={data.timeline} />
            </Card>
          </div>
          {sandbox && canSimulate ? (
            <SandboxPanel type="payment" orderNo={orderNo} status={p.status} reload={reload} />
          ) : null}
          <EventsSection events={data.events} reload={reload} />
        </>
      ) : null}
    </>
  );
}

export function PayoutPage({ orderNo, sandbox }: { orderNo: string; sandbox: boolean }) {
  usePageTitle(`Payout ${orderNo}`);
  const canSimulate = useCan('debugger');
  const { data, error, loading, reload } = useAsync(
    () => api.get<PayoutDetail>(`/payouts/${encodeURIComponent(orderNo)}`),
    [orderNo],
  );
  const p = data?.payout;
  const r = data?.receipt;
  return (
    <>
      <p className="crumbs">
        <Link to="/payouts">← Payouts</Link>
      </p>
      <PageHeading>
        Payout <span className="mono">{orderNo}</span>
      </PageHeading>
      <LoadStatus state={{ data, error, loading }} what="the payout" />
      {p && r && data ? (
        <>
          <div className="toolbar">
            <StatusBadge status={p.status} />
            <button type="button" className="button button-small" onClick={reload}>
              Refresh
            </button>
            <button type="button" className="button button-small" onClick={() => window.print()}>
              Print receipt
            </button>
          </div>
          <div className="grid-2">
            <Card id="receipt" title="Receipt" className="receipt">
              <Details
                items={[
                  ['Status', <StatusBadge status={r.status} />],
                  ['Payee', r.payee.name],
                  ['Account', <span className="mono">{r.payee.accountNumber}</span>],
                  ['Bank code', r.payee.bankCode],
                  ['Payee document', r.payee.documentNumber],
                  ['Amount', formatMoney(r.amount, r.currency)],
                  ['Fee', formatMoney(r.fee, r.currency)],
                  ['Total debited', formatMoney(r.total, r.currency)],
                  ['Channel trade no.', r.channelTradeNo],
                  ['Refund no.', r.refundNo],
                  ['Refunded amount', r.refundAmount ? formatMoney(r.refundAmount, r.currency) : undefined],
                  ['Refund time', r.refundTime ? <Time ms={r.refundTime} /> : undefined],
                  ['Your reference', <span className="mono">{r.merchantOrderNo}</span>],
                  ['Created', <Time ms={r.createdAt} />],
                  ['Confirmed', r.confirmedAt ? <Time ms={r.confirmedAt} /> : undefined],
                  ['Final since', r.finalizedAt ? <Time ms={r.finalizedAt} /> : undefined],
                  ['Attach', p.attach],
                  ['Webhook URL', <span className="mono break">{p.webhookUrl}</span>],
                ]}
              />
            </Card>
            <Card id="timeline" title="Timeline">
              <Timeline entries={data.timeline} />
            </Card>
          </div>
          {data.bankFile ? (
            <Card id="bank-file" title="Bank file">
              <p className="hint">
                Sent to the bank as a SEPA credit transfer in the file below; the bank's answers (pain.002 status
                reports and camt.054 notifications) are shown as they arrive.
              </p>
              <Details
                items={[
                  ['File (MsgId)', <span className="mono">{data.bankFile.msgId}</span>],
                  ['Transfer', data.bankFile.instant ? 'SEPA Instant' : 'SEPA credit transfer'],
                  ['Bank status', data.bankFile.bankStatus ?? 'no answer yet'],
                  ['Reason code', data.bankFile.reasonCode],
                  ['Return reference', data.bankFile.returnReference],
                ]}
              />
              {data.bankFile.statuses.length > 0 ? (
                <>
                  <h3>What the bank said on the way</h3>
                  <ol className="bank-statuses" data-testid="bank-statuses">
                    {data.bankFile.statuses.map((s, i) => (
                      <li key={i}>
                        <Time ms={s.at} /> <span className="mono">{s.status}</span>
                        {s.reason ? <span className="mono"> {s.reason}</span> : null}
                        {' — '}
                        {BANK_STATUS_MEANING[s.status] ?? 'a status of the bank'}
                        {s.level === 'file'
                          ? ', for the whole file'
                          : s.level === 'block'
                            ? ', for its payment block'
                            : ''}
                      </li>
                    ))}
                  </ol>
                </>
              ) : null}
            </Card>
          ) : null}
          {sandbox && canSimulate ? (
            <SandboxPanel type="payout" orderNo={orderNo} status={p.status} reload={reload} />
          ) : null}
          <EventsSection events={data.events} reload={reload} />
        </>
      ) : null}
    </>
  );
}
