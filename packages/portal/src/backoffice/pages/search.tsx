/**
 * The search across every merchant: one box for any identifier an order has (order numbers,
 * merchant order numbers, channel trade numbers, Pix txid/endToEndId, SEPA MsgId/EndToEndId,
 * documents and accounts, amounts) and filters; newest first, a page at a time, a CSV export.
 */
import { Field, LoadStatus, PageHeading, StatusBadge, useAsync } from '../../components';
import { CURRENCIES, formatMoney, PAYMENT_STATUSES, PAYOUT_STATUSES } from '../../format';
import {
  CurrencyFilter,
  DateRangeFields,
  FilterActions,
  FilterPanel,
  LinkedRow,
  numberOrUndefined,
  PageSizeField,
  Pager,
  StatusFilter,
  submitFilters,
  usePages,
} from '../../lists';
import { DataTable } from '../../table';
import { api, downloadUrl, queryString } from '../../api';
import { Link, useLocation, usePageTitle } from '../../router';
import { MerchantFilter, OrderTypeFilter } from '../filters';
import { Time } from '../time';
import type { OrderItem } from '../types';

const STATUSES = [...new Set([...PAYMENT_STATUSES, ...PAYOUT_STATUSES])];
const FILTERS = ['q', 'type', 'status', 'merchant', 'currency', 'from', 'to', 'pageSize'] as const;

export const orderLink = (orderNo: string) => `/orders/${encodeURIComponent(orderNo)}`;

export function SearchPage() {
  usePageTitle('Search');
  const { search } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((name) => [name, search.get(name) ?? ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const key = search.toString();
  const pages = usePages(key);
  const query = { ...filters, pageSize: filters.pageSize || '20' };
  const results = useAsync(
    () =>
      api.get<{ items: OrderItem[]; nextCursor?: string }>(`/orders${queryString({ ...query, cursor: pages.cursor })}`),
    [key, pages.cursor],
  );
  const { pageSize: _pageSize, ...exported } = filters;

  const submit = submitFilters('/search', FILTERS, { pageSize: '20' });

  return (
    <>
      <PageHeading>Search</PageHeading>
      <p className="lead">Every merchant&apos;s payments and payouts, newest first.</p>
      <form onSubmit={submit} aria-label="Search orders" key={key}>
        <div className="search-box">
          <Field
            label="Identifier or amount"
            hint="An order number, merchant order number, channel trade number, Pix txid or endToEndId, SEPA MsgId or EndToEndId, a document or account number, or an amount (12.34)."
          >
            {(props) => (
              <input {...props} type="search" name="q" maxLength={100} defaultValue={filters.q} spellCheck={false} />
            )}
          </Field>
          <button type="submit" className="button button-primary">
            Search
          </button>
        </div>
        <FilterPanel>
          <div className="filters">
            <OrderTypeFilter value={filters.type} />
            <StatusFilter statuses={STATUSES} value={filters.status} />
            <MerchantFilter value={filters.merchant} />
            <CurrencyFilter currencies={CURRENCIES} value={filters.currency} />
            <DateRangeFields from={numberOrUndefined(filters.from)} to={numberOrUndefined(filters.to)} />
            <PageSizeField value={filters.pageSize || '20'} />
            <FilterActions path="/search" />
          </div>
        </FilterPanel>
      </form>
      <LoadStatus state={results} what="orders" />
      {results.data ? (
        <>
          <DataTable
            label="Orders found"
            busy={results.loading}
            columns={[
              'Order',
              'Merchant',
              'Status',
              { heading: 'Amount', className: 'num hide-narrow' },
              { heading: 'Created', className: 'hide-narrow' },
              { heading: 'Merchant order no.', className: 'hide-narrow' },
              { heading: 'Payer or payee', className: 'hide-narrow' },
            ]}
          >
            {results.data.items.length === 0 ? (
              <tr>
                <td colSpan={7} className="empty">
                  No order matches. Check the identifier, or widen the filters.
                </td>
              </tr>
            ) : (
              results.data.items.map((item) => (
                <LinkedRow key={item.orderNo} to={orderLink(item.orderNo)}>
                  <td>
                    <Link to={orderLink(item.orderNo)} className="mono order-no">
                      {item.orderNo}
                    </Link>
                    <span className="muted small show-narrow">
                      <Time ms={item.createdAt} />
                    </span>
                    <span className="show-narrow">{formatMoney(item.amount, item.currency)}</span>
                  </td>
                  <td>
                    {item.merchant.name}
                    <div className="muted small mono hide-narrow">{item.merchant.accessKey}</div>
                  </td>
                  <td>
                    <StatusBadge status={item.status} />
                  </td>
                  <td className="num hide-narrow">{formatMoney(item.amount, item.currency)}</td>
                  <td className="hide-narrow">
                    <Time ms={item.createdAt} />
                  </td>
                  <td className="hide-narrow mono">{item.merchantOrderNo}</td>
                  <td className="hide-narrow">
                    {item.counterparty.name ?? '—'}
                    {item.counterparty.documentNumber ? (
                      <span className="muted small mono"> {item.counterparty.documentNumber}</span>
                    ) : null}
                  </td>
                </LinkedRow>
              ))
            )}
          </DataTable>
          <Pager
            pageNumber={pages.pageNumber}
            nextCursor={results.data.nextCursor}
            onNext={pages.next}
            onPrevious={pages.previous}
          >
            <a className="button" href={downloadUrl(`/orders/export.csv${queryString(exported)}`)} download>
              Export CSV
            </a>
          </Pager>
        </>
      ) : null}
    </>
  );
}
