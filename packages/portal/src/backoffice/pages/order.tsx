/**
 * An order's whole story: its fields, its merchant, and its timeline, oldest first (every state
 * change with its cause, every exchange with the channel, the bank file and the bank's status,
 * every webhook event and delivery attempt, every ledger transaction). Beside it, as the role
 * allows: ask the channel again, resend an event.
 */
import type { ReactNode } from 'react';
import { useAction } from '../../action';
import { ActionStatus, Card, Details, LoadStatus, PageHeading, StatusBadge, useAsync } from '../../components';
import { formatMoney } from '../../format';
import { api, downloadUrl } from '../../api';
import { Link, usePageTitle } from '../../router';
import { useCan } from '../session';
import { Time } from '../time';
import type { OrderStory, TimelineEntry } from '../types';

const CAUSES: Readonly<Record<string, string>> = {
  merchant_api: "the merchant's API",
  portal: 'the portal',
  channel: 'the channel',
  bank_file: 'a bank file',
  sandbox: 'the sandbox',
  operator: 'an operator',
  expiry: 'expiry',
};

const json = (value: unknown) => {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
};

function Payload({ summary, value }: { summary: string; value: unknown }) {
  if (value === undefined || value === null) return null;
  return (
    <details>
      <summary>{summary}</summary>
      <pre className="code wrap">{json(value)}</pre>
    </details>
  );
}

const text = (value: unknown) => (value === undefined || value === null || value === '' ? undefined : String(value));

export function OrderPage({ orderNo }: { orderNo: string }) {
  usePageTitle(`Order ${orderNo}`);
  const story = useAsync(() => api.get<OrderStory>(`/orders/${encodeURIComponent(orderNo)}`), [orderNo]);
  const action = useAction();
  const support = useCan('support');
  const files = useCan('files');
  const order = story.data;

  const sync = () =>
    void action.run(async () => {
      const result = await api.post<{ channel: string | null; channelStatus?: string; before: string; after: string }>(
        `/orders/${encodeURIComponent(orderNo)}/sync`,
        {},
      );
      story.reload();
      return result.before === result.after
        ? `The channel was asked: the order stays ${result.after}.`
        : `The channel was asked: the order moved from ${result.before} to ${result.after}.`;
    });
  const resend = (eventId: string) =>
    void action.run(
      async () => {
        await api.post(`/events/${encodeURIComponent(eventId)}/resend`, {});
        story.reload();
        return `Event ${eventId} is queued for delivery again (same id and body, signed afresh).`;
      },
      { name: eventId },
    );

  return (
    <>
      <p className="crumbs">
        <Link to="/search">← Search</Link>
      </p>
      <PageHeading>
        Order <span className="mono">{orderNo}</span>
      </PageHeading>
      <LoadStatus state={story} what="the order" />
      <ActionStatus action={action} />
      {order ? (
        <>
          <div className="toolbar">
            <StatusBadge status={order.status} />
            <span>{formatMoney(order.amount, order.currency)}</span>
            {support ? (
              <button type="button" className="button" disabled={action.busy} onClick={sync}>
                {action.busy && !action.running ? 'Asking the channel…' : 'Ask the channel again'}
              </button>
            ) : null}
          </div>
          <div className="grid-2">
            <Card id="order-fields" title="The order">
              <Details
                items={[
                  ['Type', order.orderType === 'PAYMENT' ? 'Payment' : 'Payout'],
                  ['Status', order.status],
                  ['Amount', formatMoney(order.amount, order.currency)],
                  ['Merchant order no.', <span className="mono">{order.merchantOrderNo}</span>],
                  ['Method', text(order.method)],
                  ['Channel', text(order.channel) ?? 'sandbox'],
                  ['Channel trade no.', text(order.channelTradeNo)],
                  ['Failure reason', text(order.failureReason)],
                  ['Created', <Time ms={order.createdAt} />],
                  ['Finalized', order.finalizedAt ? <Time ms={order.finalizedAt as number} /> : undefined],
                ]}
              />
              <Payload summary="Every field, as the merchant's query answers it" value={fieldsOf(order)} />
            </Card>
            <Card id="order-merchant" title="Merchant">
              <Details
                items={[
                  ['Name', order.merchant.name],
                  [
                    'Access key',
                    <Link to={`/merchants/${encodeURIComponent(order.merchant.accessKey)}`} className="mono">
                      {order.merchant.accessKey}
                    </Link>,
                  ],
                  ['State', order.merchant.disabled ? 'Disabled' : 'Enabled'],
                ]}
              />
            </Card>
          </div>
          <Card id="timeline" title="Timeline">
            <p className="hint">Oldest first. Credentials are never recorded.</p>
            <ol className="timeline" aria-label="Timeline of the order">
              {order.timeline.map((entry, index) => (
                <li key={index} className="story-entry">
                  <Time ms={entry.at} />{' '}
                  <Entry
                    entry={entry}
                    actions={{ support, files, busy: action.busy, running: action.running, resend }}
                  />
                </li>
              ))}
            </ol>
          </Card>
        </>
      ) : null}
    </>
  );
}

/** The order's own fields (the story's merchant and timeline left out). */
function fieldsOf(order: OrderStory) {
  const { timeline: _timeline, merchant: _merchant, ...fields } = order;
  return fields;
}

function Kind({ children }: { children: ReactNode }) {
  return <span className="story-kind">{children}</span>;
}

function Entry({
  entry,
  actions,
}: {
  entry: TimelineEntry;
  actions: {
    support: boolean;
    files: boolean;
    busy: boolean;
    running: string | undefined;
    resend: (eventId: string) => void;
  };
}) {
  switch (entry.kind) {
    case 'status':
      return (
        <>
          <Kind>State</Kind> {entry.from ? `${entry.from} → ` : ''}
          <StatusBadge status={entry.to} />{' '}
          <span className="muted">
            by {entry.cause ? (CAUSES[entry.cause] ?? entry.cause) : 'a cause not recorded'}
          </span>
        </>
      );
    case 'channel':
      if (entry.direction === 'sent') {
        return (
          <>
            <Kind>Channel</Kind> {entry.channel}: <span className="mono">{entry.operation}</span>{' '}
            <span className="muted">
              {entry.error ? `failed: ${entry.error}` : 'answered'} in {entry.latencyMs} ms
            </span>
            <Payload summary="What was sent" value={entry.sent} />
            <Payload summary="What the channel answered" value={entry.answered} />
          </>
        );
      }
      return (
        <>
          <Kind>Notification</Kind> from {entry.channel} <span className="mono">{entry.eventId}</span>: {entry.outcome}
          {entry.detail ? <span className="muted"> ({entry.detail})</span> : null}
          <Payload summary="What the channel sent" value={entry.body} />
        </>
      );
    case 'bank_file':
      return (
        <>
          <Kind>Bank file</Kind> <span className="mono">{entry.name}</span> (MsgId{' '}
          <span className="mono">{entry.msgId}</span>): {entry.state}
          {entry.groupStatus ? `, the bank's group status ${entry.groupStatus}` : ''}; {entry.transactions}{' '}
          {entry.transactions === 1 ? 'transfer' : 'transfers'}, EUR {entry.controlSum}{' '}
          {actions.files ? (
            <a
              href={downloadUrl(
                `/channels/${encodeURIComponent(entry.channel)}/files/${encodeURIComponent(entry.msgId)}/xml`,
              )}
              download
            >
              Download the XML
            </a>
          ) : null}
        </>
      );
    case 'bank_status':
      return (
        <>
          <Kind>Bank status</Kind> {entry.status ? <StatusBadge status={entry.status} /> : 'no status code'}
          {entry.reason ? `, reason ${entry.reason}` : ''}
          {entry.returnReference ? `, returned (${entry.returnReference})` : ''}
        </>
      );
    case 'event':
      return (
        <>
          <Kind>Event</Kind> <span className="mono">{entry.eventId}</span> reports {entry.status}:{' '}
          <StatusBadge status={entry.deliveryStatus} /> <span className="muted">to {entry.webhookUrl}</span>{' '}
          {actions.support ? (
            <button
              type="button"
              className="button button-small"
              disabled={actions.busy}
              aria-label={`Resend event ${entry.eventId}`}
              onClick={() => actions.resend(entry.eventId)}
            >
              {actions.running === entry.eventId ? 'Resending…' : 'Resend'}
            </button>
          ) : null}
          <Payload summary="Its body" value={entry.body} />
        </>
      );
    case 'webhook':
      return (
        <>
          <Kind>Delivery</Kind> attempt {entry.attempt} of <span className="mono">{entry.eventId}</span>:{' '}
          {entry.httpStatus !== null ? (
            <span className={`badge badge-${entry.httpStatus >= 200 && entry.httpStatus < 300 ? 'good' : 'bad'}`}>
              HTTP {entry.httpStatus}
            </span>
          ) : (
            <span className="badge badge-bad">no answer</span>
          )}
          {entry.error ? ` ${entry.error}` : ''} <span className="muted">in {entry.latencyMs} ms</span>
          {entry.responseExcerpt ? <Payload summary="The answer" value={entry.responseExcerpt} /> : null}
        </>
      );
    case 'ledger':
      return (
        <>
          <Kind>Ledger</Kind> {entry.transactionKind} <span className="mono muted">{entry.transactionId}</span>
          <ul className="ledger-lines">
            {entry.entries.map((line, i) => (
              <li key={i}>
                {line.owner} {line.account}:{' '}
                <span className={line.amount.startsWith('-') ? 'debit' : 'credit'}>
                  {formatMoney(line.amount, line.currency)}
                </span>
              </li>
            ))}
          </ul>
        </>
      );
  }
}
