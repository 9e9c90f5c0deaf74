import { api, queryString } from '../api';
import { BarChart } from '../chart';
import { Card, LoadStatus, PageHeading, StatusBadge, Time, toneOf, useAsync } from '../components';
import { formatMoney, PAYMENT_STATUSES, PAYOUT_STATUSES } from '../format';
import { OrderLink } from '../lists';
import { Link, navigate, useLocation, usePageTitle } from '../router';
import { DataTable } from '../table';
import type { Overview, StatusTotal } from '../types';

/** The periods the overview offers, newest data last. */
const PERIODS: readonly { id: string; label: string; ms: number }[] = [
  { id: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { id: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { id: '30d', label: 'Last 30 days', ms: 30 * 86_400_000 },
];

function countsByStatus(rows: readonly StatusTotal[], statuses: readonly string[]) {
  return statuses.map((status) => ({
    label: status,
    value: rows.filter((row) => row.status === status).reduce((sum, row) => sum + row.count, 0),
    tone: `bar-${toneOf(status)}`,
  }));
}

function OrdersByStatus({
  title,
  id,
  rows,
  statuses,
  listPath,
  period,
}: {
  title: string;
  id: string;
  rows: readonly StatusTotal[];
  statuses: readonly string[];
  listPath: string;
  period: { from: number; to: number };
}) {
  const total = rows.reduce((sum, row) => sum + row.count, 0);
  return (
    <Card id={id} title={title}>
      <p className="muted" data-testid={`${id}-total`}>
        {total} {total === 1 ? 'order' : 'orders'} created in this period.
      </p>
      <BarChart bars={countsByStatus(rows, statuses)} label={`${title} by status`} />
      {rows.length > 0 ? (
        <DataTable
          label={`${title}: volume by status and currency`}
          className="compact"
          caption="Volume by status and currency"
          columns={['Status', { heading: 'Orders', className: 'num' }, { heading: 'Volume', className: 'num' }]}
        >
          {rows.map((row) => (
            <tr key={`${row.status}-${row.currency}`}>
              <th scope="row">
                <Link to={`${listPath}${queryString({ status: row.status, from: period.from, to: period.to })}`}>
                  <StatusBadge status={row.status} />
                </Link>
              </th>
              <td className="num">{row.count}</td>
              <td className="num" data-testid={`volume-${id}-${row.status}-${row.currency}`}>
                {formatMoney(row.amount, row.currency)}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </Card>
  );
}

export function OverviewPage() {
  usePageTitle('Overview');
  const { search } = useLocation();
  const period = PERIODS.find((p) => p.id === search.get('period')) ?? (PERIODS[1] as (typeof PERIODS)[number]);
  const { data, error, loading } = useAsync(() => {
    // Whole minutes, so the address of the request is stable while the page is open.
    const to = Math.ceil(Date.now() / 60_000) * 60_000;
    return api.get<Overview>(`/overview${queryString({ from: to - period.ms, to })}`);
  }, [period.id]);
  return (
    <>
      <PageHeading>Overview</PageHeading>
      <div className="toolbar">
        <label htmlFor="period">Period</label>
        <select
          id="period"
          className="inline-select"
          value={period.id}
          onChange={(event) => navigate(`/overview${queryString({ period: event.target.value })}`)}
        >
          {PERIODS.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
      </div>
      <LoadStatus state={{ data, error, loading }} what="the overview" />
      {data ? (
        <>
          <div className="grid-2">
            <OrdersByStatus
              title="Payments"
              id="payments-by-status"
              rows={data.payments}
              statuses={PAYMENT_STATUSES}
              listPath="/payments"
              period={data}
            />
            <OrdersByStatus
              title="Payouts"
              id="payouts-by-status"
              rows={data.payouts}
              statuses={PAYOUT_STATUSES}
              listPath="/payouts"
              period={data}
            />
          </div>
          <div className="grid-2">
            <Card id="overview-balances" title="Balances">
              {data.balances.length === 0 ? <p className="empty">No balance yet.</p> : null}
              <dl className="balances">
                {data.balances.map((b) => (
                  <div key={b.currency} className="balance">
                    <dt>{b.currency} available</dt>
                    <dd data-testid={`overview-available-${b.currency}`}>{formatMoney(b.available, b.currency)}</dd>
                    <dt>{b.currency} reserved for payouts</dt>
                    <dd data-testid={`overview-reserved-${b.currency}`}>{formatMoney(b.reserved, b.currency)}</dd>
                  </div>
                ))}
              </dl>
              <p>
                <Link to="/balances">Balances and ledger</Link>
              </p>
            </Card>
            <Card id="recent-failures" title="Webhook delivery failures">
              <p className="muted" data-testid="failed-events">
                {data.failedEvents === 0
                  ? 'No event has failed delivery.'
                  : `${data.failedEvents} ${data.failedEvents === 1 ? 'event has' : 'events have'} failed delivery (all retries used).`}
              </p>
              {data.recentFailures.length > 0 ? (
                <ul className="failure-list">
                  {data.recentFailures.map((event) => (
                    <li key={event.eventId}>
                      <OrderLink orderNo={event.orderNo} /> <StatusBadge status={event.status} />{' '}
                      <span className="mono small">{event.eventId}</span>
                      <br />
                      <span className="small">
                        {event.lastStatusCode !== null ? `HTTP ${event.lastStatusCode}` : (event.lastError ?? '')} ·{' '}
                        <Time ms={event.createdAt} />
                      </span>
                    </li>
                  ))}
                </ul>
              ) : null}
              {data.failedEvents > 0 ? (
                <p>
                  <Link to="/events?status=failed">All failed events (resend them)</Link>
                </p>
              ) : null}
            </Card>
          </div>
        </>
      ) : null}
    </>
  );
}
