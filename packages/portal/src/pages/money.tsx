import { API_BASE, api, queryString } from '../api';
import { Card, LoadStatus, PageHeading, Time, useAsync } from '../components';
import { CURRENCIES, formatMoney } from '../format';
import { FilterForm, listQuery, Pager, useListState } from '../lists';
import { Link, usePageTitle } from '../router';
import { useCan } from '../session';
import { DataTable } from '../table';
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
      <Card id="balances" title="Balances">
        <LoadStatus state={balances} what="balances" />
        {balances.data ? (
          <DataTable
            label="Balances per currency"
            columns={[
              'Currency',
              { heading: 'Available', className: 'num' },
              { heading: 'Reserved for payouts', className: 'num' },
            ]}
          >
            {balances.data.map((b) => (
              <tr key={b.currency}>
                <th scope="row">{b.currency}</th>
                <td className="num" data-testid={`available-${b.currency}`}>
                  {formatMoney(b.available, b.currency)}
                </td>
                <td className="num">{formatMoney(b.reserved, b.currency)}</td>
              </tr>
            ))}
          </DataTable>
        ) : null}
        <p className="hint">
          Every balance is the sum of the ledger entries below: money in from payments (after fees), reserved and
          settled for payouts, and credited back when a payout is returned.
        </p>
      </Card>

      <Card id="ledger" title="Ledger entries">
        <FilterForm path="/balances" label="Filter ledger entries" filters={list.filters} currencies={CURRENCIES} />
        {canExport ? (
          <p>
            <a className="button" href={exportHref} download>
              Download CSV
            </a>{' '}
            <span className="hint inline-hint">All entries matching the filters (up to 50,000), newest first.</span>
          </p>
        ) : null}
        <LoadStatus state={entries} what="ledger entries" />
        {entries.data ? (
          <>
            <DataTable
              label="Ledger entries"
              busy={entries.loading}
              columns={['Time', 'Order', 'Kind', 'Account', { heading: 'Amount', className: 'num' }, 'Reference']}
            >
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
            </DataTable>
            {entries.data.items.length === 0 ? <p className="empty">No ledger entries match these filters.</p> : null}
            <Pager
              pageNumber={list.pageNumber}
              nextCursor={entries.data.nextCursor}
              onNext={list.next}
              onPrevious={list.previous}
            />
          </>
        ) : null}
      </Card>
    </>
  );
}
