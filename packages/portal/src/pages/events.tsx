import type { FormEvent } from 'react';
import { useAction } from '../action';
import { api, queryString } from '../api';
import { ActionStatus, Card, LoadStatus, PageHeading, StatusBadge, Time, useAsync } from '../components';
import { fromLocalInput, PAYMENT_STATUSES, PAYOUT_STATUSES } from '../format';
import {
  DateRangeFields,
  FilterActions,
  FilterPanel,
  LinkedRow,
  OrderLink,
  orderPath,
  Pager,
  SelectFilter,
  submitFilters,
  TotalLine,
  useListState,
} from '../lists';
import { ResendButton, reloadSoon, useResend } from '../resend';
import { useLocation, usePageTitle } from '../router';
import { useCan } from '../session';
import { ACTIONS_COLUMN, DataTable } from '../table';
import type { CountedPage, EventSummary, RecoverResult } from '../types';

const DELIVERY = ['pending', 'delivered', 'failed'];
const ORDER_TYPES = ['PAYMENT', 'PAYOUT'];
const ORDER_STATUSES = [...new Set([...PAYMENT_STATUSES, ...PAYOUT_STATUSES])].filter(
  (s) => s !== 'PENDING' && s !== 'PROCESSING',
);

interface EventFilters {
  status: string;
  type: string;
  orderStatus: string;
  from: number | undefined;
  to: number | undefined;
}

function EventFilterForm({ filters }: { filters: EventFilters }) {
  const submit = submitFilters('/events', ['status', 'type', 'orderStatus', 'from', 'to']);
  return (
    <FilterPanel>
      <form className="filters" onSubmit={submit} aria-label="Filter events" key={JSON.stringify(filters)}>
        <SelectFilter label="Delivery" name="status" value={filters.status} any="Any delivery" options={DELIVERY} />
        <SelectFilter label="Type" name="type" value={filters.type} any="Payments and payouts" options={ORDER_TYPES} />
        <SelectFilter
          label="Order status"
          name="orderStatus"
          value={filters.orderStatus}
          any="Any order status"
          options={ORDER_STATUSES}
        />
        <DateRangeFields from={filters.from} to={filters.to} />
        <FilterActions path="/events" />
      </form>
    </FilterPanel>
  );
}

/** Resend every failed event created in a time range (the recover operation), in bounded batches. */
function RecoverForm({ from, to, onDone }: { from: number | undefined; to: number | undefined; onDone: () => void }) {
  const action = useAction();
  const defaultTo = to ?? Math.ceil(Date.now() / 60_000) * 60_000;
  const defaultFrom = from ?? defaultTo - 86_400_000;
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const start = fromLocalInput(String(form.get('from') ?? ''));
    const end = fromLocalInput(String(form.get('to') ?? ''));
    if (start === undefined || end === undefined) {
      action.fail(new Error('Give both ends of the range.'));
      return;
    }
    await action.run(async () => {
      const result = await api.post<RecoverResult>('/events/recover', { from: start, to: end + 59_999 });
      reloadSoon(onDone);
      return result.resent === 0
        ? 'No failed event in this range.'
        : `${result.resent} failed ${result.resent === 1 ? 'event is' : 'events are'} being sent again.` +
            (result.remaining > 0
              ? ` ${result.remaining} more failed in this range (at most ${result.max} per run): press again.`
              : '');
    });
  };
  return (
    <Card id="recover" title="Resend all failed events in a range">
      <p className="muted">
        Every event whose delivery failed (all retries used) and that was created in the range is sent once more: same
        eventId and body, a fresh signature. Use it once your endpoint is fixed.
      </p>
      <form className="filters" onSubmit={(event) => void submit(event)} aria-label="Resend failed events">
        <DateRangeFields from={defaultFrom} to={defaultTo} labels={['Created from', 'Created to']} />
        <div className="filter-actions">
          <button type="submit" className="button button-primary" disabled={action.busy}>
            {action.busy ? 'Resending…' : 'Resend failed events'}
          </button>
        </div>
      </form>
      <ActionStatus action={action} />
    </Card>
  );
}

export function EventsPage() {
  usePageTitle('Webhook events');
  const canResend = useCan('webhooks');
  const { search } = useLocation();
  const list = useListState();
  const filters: EventFilters = {
    status: search.get('status') ?? '',
    type: search.get('type') ?? '',
    orderStatus: search.get('orderStatus') ?? '',
    from: list.filters.from,
    to: list.filters.to,
  };
  const { data, error, loading, reload } = useAsync(
    () =>
      api.get<CountedPage<EventSummary>>(
        `/events${queryString({ ...filters, pageSize: list.filters.pageSize, cursor: list.cursor })}`,
      ),
    [list.key, list.cursor],
  );
  const resender = useResend(reload, (eventId) => `Event ${eventId} is being sent again.`);
  return (
    <>
      <PageHeading>Webhook events</PageHeading>
      <EventFilterForm filters={filters} />
      <ActionStatus action={resender} />
      <LoadStatus state={{ data, error, loading }} what="events" />
      {data ? (
        <>
          <TotalLine total={data.total} noun="events" />
          <DataTable
            label="Webhook events"
            caption="Webhook events, newest first"
            captionHidden
            busy={loading}
            columns={[
              'Order',
              'Event',
              'Delivery',
              { heading: 'Attempts', className: 'num hide-narrow' },
              { heading: 'Last answer', className: 'hide-narrow' },
              { heading: 'Created', className: 'hide-narrow' },
              ACTIONS_COLUMN,
            ]}
          >
            {data.items.map((event) => (
              <LinkedRow key={event.eventId} to={orderPath(event.orderNo)}>
                <th scope="row">
                  <OrderLink orderNo={event.orderNo} />
                </th>
                <td>
                  <StatusBadge status={event.status} /> <span className="mono small">{event.eventId}</span>
                </td>
                <td>
                  <StatusBadge status={event.deliveryStatus} />
                </td>
                <td className="num hide-narrow">{event.attempts}</td>
                <td className="hide-narrow">
                  <code className="excerpt">
                    {event.lastStatusCode !== null ? `HTTP ${event.lastStatusCode}` : (event.lastError ?? '—')}
                  </code>
                </td>
                <td className="hide-narrow">
                  <Time ms={event.createdAt} />
                </td>
                <td>{canResend ? <ResendButton eventId={event.eventId} resender={resender} /> : null}</td>
              </LinkedRow>
            ))}
          </DataTable>
          {data.items.length === 0 ? <p className="empty">No events match these filters.</p> : null}
          <Pager
            pageNumber={list.pageNumber}
            nextCursor={data.nextCursor}
            onNext={list.next}
            onPrevious={list.previous}
          />
        </>
      ) : null}
      {canResend ? <RecoverForm from={filters.from} to={filters.to} onDone={reload} /> : null}
    </>
  );
}
