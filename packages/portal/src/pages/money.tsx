import { API_BASE, api, queryString } from '../api';
import { ErrorAlert, Loading, PageHeading, TableWrap, Time, useAsync } from '../components';
import { CURRENCIES, formatMoney } from '../format';
import { FilterForm, listQuery, Pager, useListState } from '../lists';
import { Link, usePageTitle } from '../router';
import { useCan } from '../session';
import type { Balance, LedgerEntry, Page } from '../types';

const ACCOUNT_NAMES: Readonly<Record<string, string>> = { available: 'Available', reserved: 'Reserved' };

const orderLink = (orderNo: string) =>
  orderNo.startsWith('W') ? `/payouts/${orderNo}` : orderNo.startsWith('P') ? `/payments/${orderNo}` : undefined;

export function BalancesPage() {
  usePageTitle('Balances and ledger');
  const canExport = useCan('exports');
  const balances = useAsync(() => api.get<Balance[]>('/balances'), []);
  const list = useListState();
  const entries = useAsync(
    () =>
      api.get<Page<LedgerEntry>>(
        `/ledger${listQuery({ ...list.filters, status: '', orderNo: '', q: '' }, list.cursor)}`,
      ),
    [list.key, list.cursor],
  );
  const exportHref = `${API_BASE}/ledger/export.csv${queryString({
    currency: list.filters.currency,
    from: list.filters.from,
    to: list.filters.to,
  })}`;

  return (
    <>
      <PageHeading>Balances and ledger</PageHeading>
      <section className="card" aria-labelledby="balances">
        <h2 id="balances">Balances</h2>
        <ErrorAlert error={balances.error} />
        {balances.loading && !balances.data ? <Loading what="balances" /> : null}
        {balances.data ? (
          <TableWrap label="Balances per currency">
            <table>
              <thead>
                <tr>
                  <th scope="col">Currency</th>
                  <th scope="col" className="num">
                    Available
                  </th>
                  <th scope="col" className="num">
                    Reserved for payouts
                  </th>
                </tr>
              </thead>
              <tbody>
                {balances.data.map((b) => (
                  <tr key={b.currency}>
                    <th scope="row">{b.currency}</th>
                    <td className="num" data-testid={`available-${b.currency}`}>
                      {formatMoney(b.available, b.currency)}
                    </td>
                    <td className="num">{formatMoney(b.reserved, b.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
        <p className="hint">
          Every balance is the sum of the ledger entries below: money in from payments (after fees), reserved and
          settled for payouts, and credited back when a payout is returned.
        </p>
      </section>

      <section className="card" aria-labelledby="ledger">
        <h2 id="ledger">Ledger entries</h2>
        <FilterForm path="/balances" label="Filter ledger entries" filters={list.filters} currencies={CURRENCIES} />
        {canExport ? (
          <p>
            <a className="button" href={exportHref} download>
              Download CSV
            </a>{' '}
            <span className="hint inline-hint">All entries matching the filters (up to 50,000), newest first.</span>
          </p>
        ) : null}
        <ErrorAlert error={entries.error} />
        {entries.loading && !entries.data ? <Loading what="ledger entries" /> : null}
        {entries.data ? (
          <>
            <TableWrap label="Ledger entries">
              <table aria-busy={entries.loading}>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Order</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Account</th>
                    <th scope="col" className="num">
                      Amount
                    </th>
                    <th scope="col">Reference</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.data.items.map((e) => {
                    const link = orderLink(e.orderNo);
                    return (
                      <tr key={e.entryId}>
                        <td>
                          <Time ms={e.createdAt} />
                        </td>
                        <td>
                          {link ? (
                            <Link to={link} className="mono">
                              {e.orderNo}
                            </Link>
                          ) : (
                            <span className="mono">{e.orderNo}</span>
                          )}
                        </td>
                        <td>{e.transactionKind.replace('_', ' ')}</td>
                        <td>{ACCOUNT_NAMES[e.account] ?? e.account}</td>
                        <td className={`num ${e.amount.startsWith('-') ? 'debit' : 'credit'}`}>
                          {e.amount.startsWith('-') ? '' : '+'}
                          {formatMoney(e.amount, e.currency)}
                          <span className="visually-hidden"> ({e.amount.startsWith('-') ? 'debit' : 'credit'})</span>
                        </td>
                        <td className="mono small">{e.reference}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableWrap>
            {entries.data.items.length === 0 ? <p className="empty">No ledger entries match these filters.</p> : null}
            <Pager
              pageNumber={list.pageNumber}
              nextCursor={entries.data.nextCursor}
              onNext={list.next}
              onPrevious={list.previous}
            />
          </>
        ) : null}
      </section>
    </>
  );
}
