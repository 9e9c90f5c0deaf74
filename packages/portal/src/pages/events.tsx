import { type FormEvent, useState } from 'react';
import { api, queryString } from '../api';
import { ErrorAlert, Field, Loading, Notice, PageHeading, StatusBadge, TableWrap, Time, useAsync } from '../components';
import { fromLocalInput, PAYMENT_STATUSES, PAYOUT_STATUSES, toLocalInput } from '../format';
import { FilterPanel, LinkedRow, OrderLink, orderPath, Pager, TotalLine, useListState } from '../lists';
import { navigate, useLocation, usePageTitle } from '../router';
import { useCan } from '../session';
import type { CountedPage, EventSummary, RecoverResult } from '../types';

const DELIVERY = ['pending', 'delivered', 'failed'];
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
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    navigate(
      `/events${queryString({
        status: text('status'),
        type: text('type'),
        orderStatus: text('orderStatus'),
        from: fromLocalInput(text('from')),
        to: fromLocalInput(text('to')),
      })}`,
    );
  };
  const select = (name: keyof EventFilters, label: string, any: string, options: readonly string[]) => (
    <Field label={label}>
      {(props) => (
        <select {...props} name={name} defaultValue={String(filters[name] ?? '')}>
          <option value="">{any}</option>
          {options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  return (
    <FilterPanel>
      <form className="filters" onSubmit={submit} aria-label="Filter events" key={JSON.stringify(filters)}>
        {select('status', 'Delivery', 'Any delivery', DELIVERY)}
        {select('type', 'Type', 'Payments and payouts', ['PAYMENT', 'PAYOUT'])}
        {select('orderStatus', 'Order status', 'Any order status', ORDER_STATUSES)}
        <Field label="From">
          {(props) => <input {...props} type="datetime-local" name="from" defaultValue={toLocalInput(filters.from)} />}
        </Field>
        <Field label="To">
          {(props) => <input {...props} type="datetime-local" name="to" defaultValue={toLocalInput(filters.to)} />}
        </Field>
        <div className="filter-actions">
          <button type="submit" className="button button-primary">
            Apply filters
          </button>
          <button type="button" className="button" onClick={() => navigate('/events')}>
            Clear
          </button>
        </div>
      </form>
    </FilterPanel>
  );
}

/** Resend every failed event created in a time range (the recover operation), in bounded batches. */
function RecoverForm({ from, to, onDone }: { from: number | undefined; to: number | undefined; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const defaultTo = to ?? Math.ceil(Date.now() / 60_000) * 60_000;
  const defaultFrom = from ?? defaultTo - 86_400_000;
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const start = fromLocalInput(String(form.get('from') ?? ''));
    const end = fromLocalInput(String(form.get('to') ?? ''));
    setError(undefined);
    setNotice('');
    if (start === undefined || end === undefined) {
      setError(new Error('Give both ends of the range.'));
      return;
    }
    setBusy(true);
    try {
      const result = await api.post<RecoverResult>('/events/recover', { from: start, to: end + 59_999 });
      setNotice(
        result.resent === 0
          ? 'No failed event in this range.'
          : `${result.resent} failed ${result.resent === 1 ? 'event is' : 'events are'} being sent again.` +
              (result.remaining > 0
                ? ` ${result.remaining} more failed in this range (at most ${result.max} per run): press again.`
                : ''),
      );
      onDone();
      for (const ms of [1_000, 3_000]) setTimeout(onDone, ms);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" aria-labelledby="recover">
      <h2 id="recover">Resend all failed events in a range</h2>
      <p className="muted">
        Every event whose delivery failed (all retries used) and that was created in the range is sent once more: same
        eventId and body, a fresh signature. Use it once your endpoint is fixed.
      </p>
      <form className="filters" onSubmit={(event) => void submit(event)} aria-label="Resend failed events">
        <Field label="Created from">
          {(props) => <input {...props} type="datetime-local" name="from" defaultValue={toLocalInput(defaultFrom)} />}
        </Field>
        <Field label="Created to">
          {(props) => <input {...props} type="datetime-local" name="to" defaultValue={toLocalInput(defaultTo)} />}
        </Field>
        <div className="filter-actions">
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Resending…' : 'Resend failed events'}
          </button>
        </div>
      </form>
      <Notice text={notice} />
      <ErrorAlert error={error} />
    </section>
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
  const [busy, setBusy] = useState<string>();
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const resend = async (eventId: string) => {
    setBusy(eventId);
    setActionError(undefined);
    setNotice('');
    try {
      await api.post(`/events/${encodeURIComponent(eventId)}/resend`);
      setNotice(`Event ${eventId} is being sent again.`);
      reload();
      for (const ms of [1_000, 3_000]) setTimeout(reload, ms);
    } catch (caught) {
      setActionError(caught);
    } finally {
      setBusy(undefined);
    }
  };
  return (
    <>
      <PageHeading>Webhook events</PageHeading>
      <EventFilterForm filters={filters} />
      <Notice text={notice} />
      <ErrorAlert error={actionError} />
      <ErrorAlert error={error} />
      {loading && !data ? <Loading what="events" /> : null}
      {data ? (
        <>
          <TotalLine total={data.total} noun="events" />
          <TableWrap label="Webhook events">
            <table aria-busy={loading}>
              <caption className="visually-hidden">Webhook events, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Event</th>
                  <th scope="col">Delivery</th>
                  <th scope="col" className="num hide-narrow">
                    Attempts
                  </th>
                  <th scope="col" className="hide-narrow">
                    Last answer
                  </th>
                  <th scope="col" className="hide-narrow">
                    Created
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
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
                    <td>
                      {canResend ? (
                        <button
                          type="button"
                          className="button button-small"
                          disabled={busy !== undefined}
                          onClick={() => void resend(event.eventId)}
                          aria-label={`Resend event ${event.eventId}`}
                        >
                          {busy === event.eventId ? 'Resending…' : 'Resend'}
                        </button>
                      ) : null}
                    </td>
                  </LinkedRow>
                ))}
              </tbody>
            </table>
          </TableWrap>
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
