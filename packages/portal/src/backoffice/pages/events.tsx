/**
 * Webhook events across merchants: deliveries failing (or any state), one resent, and the replay
 * of one merchant's failed deliveries in a time range (same ids and bodies, signed afresh), with
 * the reason it is done and how many it made due again.
 */
import type { FormEvent } from 'react';
import { useAction } from '../../action';
import { ActionStatus, Card, Field, LoadStatus, PageHeading, StatusBadge, useAsync } from '../../components';
import { fromLocalInput } from '../../format';
import {
  DateRangeFields,
  FilterActions,
  FilterPanel,
  numberOrUndefined,
  Pager,
  submitFilters,
  usePages,
} from '../../lists';
import { ACTIONS_COLUMN, DataTable } from '../../table';
import { api, queryString } from '../../api';
import { Link, useLocation, usePageTitle } from '../../router';
import { MerchantFilter, OrderTypeFilter } from '../filters';
import { useCan } from '../session';
import { Time } from '../time';
import type { EventView } from '../types';

export function EventsPage() {
  usePageTitle('Events');
  const { search } = useLocation();
  const filters = {
    status: search.get('status') ?? 'failed',
    type: search.get('type') ?? '',
    merchant: search.get('merchant') ?? '',
    from: search.get('from') ?? '',
    to: search.get('to') ?? '',
  };
  const key = search.toString();
  const pages = usePages(key);
  const status = filters.status === 'any' ? '' : filters.status;
  const list = useAsync(
    () =>
      api.get<{ items: EventView[]; nextCursor: string | null }>(
        `/events${queryString({ ...filters, status, pageSize: 20, cursor: pages.cursor })}`,
      ),
    [key, pages.cursor],
  );
  const support = useCan('support');
  const action = useAction();
  const resend = (event: EventView) =>
    void action.run(
      async () => {
        await api.post(`/events/${encodeURIComponent(event.eventId)}/resend`, {});
        list.reload();
        return `Event ${event.eventId} is queued for delivery again.`;
      },
      { name: event.eventId },
    );
  const submit = submitFilters('/events', ['status', 'type', 'merchant', 'from', 'to'], { status: 'failed' });

  return (
    <>
      <PageHeading>Events</PageHeading>
      <p className="lead">Webhook deliveries across every merchant, newest first.</p>
      {support ? <Replay merchant={filters.merchant} /> : null}
      <FilterPanel>
        <form className="filters" onSubmit={submit} aria-label="Filter events" key={key}>
          <Field label="Delivery">
            {(props) => (
              <select {...props} name="status" defaultValue={filters.status}>
                <option value="failed">Failed</option>
                <option value="pending">Waiting</option>
                <option value="delivered">Delivered</option>
                <option value="any">Any</option>
              </select>
            )}
          </Field>
          <OrderTypeFilter value={filters.type} />
          <MerchantFilter value={filters.merchant} />
          <DateRangeFields from={numberOrUndefined(filters.from)} to={numberOrUndefined(filters.to)} />
          <FilterActions path="/events" />
        </form>
      </FilterPanel>
      <ActionStatus action={action} />
      <LoadStatus state={list} what="events" />
      {list.data ? (
        <>
          <DataTable
            label="Events"
            busy={list.loading}
            columns={[
              'Event',
              'Merchant',
              'Order',
              'Delivery',
              { heading: 'Attempts', className: 'num hide-narrow' },
              { heading: 'Last answer', className: 'hide-narrow' },
              { heading: 'Created', className: 'hide-narrow' },
              ACTIONS_COLUMN,
            ]}
          >
            {list.data.items.length === 0 ? (
              <tr>
                <td colSpan={8} className="empty">
                  No event matches.
                </td>
              </tr>
            ) : (
              list.data.items.map((e) => (
                <tr key={e.eventId}>
                  <td className="mono small">
                    {e.eventId}
                    <div className="muted">{e.status}</div>
                  </td>
                  <td>
                    <Link to={`/merchants/${encodeURIComponent(e.merchant ?? '')}`} className="mono small">
                      {e.merchant}
                    </Link>
                  </td>
                  <td>
                    <Link to={`/orders/${encodeURIComponent(e.orderNo)}`} className="mono order-no">
                      {e.orderNo}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={e.deliveryStatus} />
                  </td>
                  <td className="num hide-narrow">{e.attempts}</td>
                  <td className="hide-narrow">
                    {e.lastStatusCode !== null ? `HTTP ${e.lastStatusCode}` : (e.lastError ?? '—')}
                  </td>
                  <td className="hide-narrow">
                    <Time ms={e.createdAt} />
                  </td>
                  <td>
                    {support ? (
                      <button
                        type="button"
                        className="button button-small"
                        disabled={action.busy}
                        aria-label={`Resend event ${e.eventId}`}
                        onClick={() => resend(e)}
                      >
                        {action.running === e.eventId ? 'Resending…' : 'Resend'}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))
            )}
          </DataTable>
          <Pager
            pageNumber={pages.pageNumber}
            nextCursor={list.data.nextCursor}
            onNext={pages.next}
            onPrevious={pages.previous}
          />
        </>
      ) : null}
    </>
  );
}

function Replay({ merchant }: { merchant: string }) {
  const action = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string) => String(form.get(name) ?? '').trim();
    const from = fromLocalInput(field('from'));
    const to = fromLocalInput(field('to'));
    if (from === undefined || to === undefined) {
      action.fail(new Error('Give the time range: From and To.'));
      return;
    }
    await action.run(async () => {
      const { count } = await api.post<{ count: number }>('/events/replay', {
        merchant: field('merchant'),
        from,
        to,
        reason: field('reason'),
      });
      return count === 0
        ? 'No failed delivery of that merchant in that range: nothing to replay.'
        : `${count} failed ${count === 1 ? 'delivery is' : 'deliveries are'} queued again (same ids and bodies, signed afresh).`;
    });
  };
  return (
    <Card id="replay" title="Replay failed deliveries">
      <ActionStatus action={action} />
      <form className="filters" onSubmit={(event) => void submit(event)} aria-label="Replay failed deliveries">
        <Field label="Merchant" hint="Its access key.">
          {(props) => <input {...props} name="merchant" required maxLength={100} defaultValue={merchant} />}
        </Field>
        <DateRangeFields from={undefined} to={undefined} />
        <Field label="Reason" hint="Kept in the audit trail.">
          {(props) => <input {...props} name="reason" required minLength={3} maxLength={500} />}
        </Field>
        <div className="filter-actions">
          <button type="submit" className="button button-primary" disabled={action.busy}>
            Replay
          </button>
        </div>
      </form>
    </Card>
  );
}
