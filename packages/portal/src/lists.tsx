import { type FormEvent, type MouseEvent, type ReactNode, useEffect, useId, useState } from 'react';
import { queryString } from './api';
import { Field } from './components';
import { fromLocalInput, LOCALE, toLocalInput } from './format';
import { Link, navigate, useLocation } from './router';

export interface ListFilters {
  status: string;
  from: number | undefined;
  to: number | undefined;
  orderNo: string;
  /** The search text (order number, merchantOrderNo, payer or payee name or document, amount). */
  q: string;
  currency: string;
  pageSize: number;
}

const numberOrUndefined = (text: string | null) => {
  if (!text) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
};

/**
 * A list's filters live in the address (so Back, reload and shared links keep them); the cursor
 * stack of the pages seen so far lives in the component and restarts when the filters change.
 */
export function useListState() {
  const { search } = useLocation();
  const filters: ListFilters = {
    status: search.get('status') ?? '',
    from: numberOrUndefined(search.get('from')),
    to: numberOrUndefined(search.get('to')),
    orderNo: search.get('orderNo') ?? '',
    q: search.get('q') ?? '',
    currency: search.get('currency') ?? '',
    pageSize: numberOrUndefined(search.get('pageSize')) ?? 20,
  };
  const key = search.toString();
  const [pages, setPages] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  useEffect(() => {
    if (pages.key !== key) setPages({ key, cursors: [] });
  }, [key, pages.key]);
  const cursors = pages.key === key ? pages.cursors : [];
  return {
    filters,
    key,
    cursor: cursors.at(-1),
    pageNumber: cursors.length + 1,
    next: (cursor: string) => setPages({ key, cursors: [...cursors, cursor] }),
    previous: () => setPages({ key, cursors: cursors.slice(0, -1) }),
  };
}

/** The API query of a list page. */
export function listQuery(filters: ListFilters, cursor: string | undefined, extra: Record<string, string> = {}) {
  return queryString({
    status: filters.status,
    from: filters.from,
    to: filters.to,
    orderNo: filters.orderNo,
    q: filters.q,
    currency: filters.currency,
    pageSize: filters.pageSize,
    cursor,
    ...extra,
  });
}

/**
 * A filter form's submit handler: the list's address becomes `path` with the form's fields as
 * its query. `query` reads the fields by name (trimmed text) and lists them in the address's order.
 */
export function submitFilters(
  path: string,
  query: (field: (name: string) => string) => Record<string, string | number | undefined>,
) {
  return (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    navigate(path + queryString(query((name) => String(form.get(name) ?? '').trim())));
  };
}

/** The From and To fields of a form (local date and time, sent as `from` and `to`). */
export function DateRangeFields({
  from,
  to,
  labels = ['From', 'To'],
}: {
  from: number | undefined;
  to: number | undefined;
  labels?: readonly [string, string];
}) {
  return (
    <>
      <Field label={labels[0]}>
        {(props) => <input {...props} type="datetime-local" name="from" defaultValue={toLocalInput(from)} />}
      </Field>
      <Field label={labels[1]}>
        {(props) => <input {...props} type="datetime-local" name="to" defaultValue={toLocalInput(to)} />}
      </Field>
    </>
  );
}

/** A filter form's buttons: apply the filters, or clear them (back to the plain `path`). */
export function FilterActions({ path, submitLabel = 'Apply filters' }: { path: string; submitLabel?: string }) {
  return (
    <div className="filter-actions">
      <button type="submit" className="button button-primary">
        {submitLabel}
      </button>
      <button type="button" className="button" onClick={() => navigate(path)}>
        Clear
      </button>
    </div>
  );
}

export function FilterForm({
  path,
  filters,
  statuses,
  currencies,
  searchHint,
  label,
}: {
  path: string;
  filters: ListFilters;
  statuses?: readonly string[];
  currencies?: readonly string[];
  /** With a hint, the form has a search box (`q`) that says what it finds. */
  searchHint?: string;
  label: string;
}) {
  const submit = submitFilters(path, (field) => ({
    status: field('status'),
    currency: field('currency'),
    q: field('q'),
    from: fromLocalInput(field('from')),
    to: fromLocalInput(field('to')),
    pageSize: field('pageSize') === '20' ? '' : field('pageSize'),
  }));
  return (
    <FilterPanel>
      <form className="filters" onSubmit={submit} aria-label={label} key={JSON.stringify(filters)}>
        {statuses ? (
          <Field label="Status">
            {(props) => (
              <select {...props} name="status" defaultValue={filters.status}>
                <option value="">Any status</option>
                {statuses.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        {currencies ? (
          <Field label="Currency">
            {(props) => (
              <select {...props} name="currency" defaultValue={filters.currency}>
                <option value="">All currencies</option>
                {currencies.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        <DateRangeFields from={filters.from} to={filters.to} />
        {searchHint ? (
          <Field label="Search" hint={searchHint}>
            {(props) => (
              <input
                {...props}
                type="search"
                name="q"
                maxLength={100}
                defaultValue={filters.q || filters.orderNo}
                spellCheck={false}
              />
            )}
          </Field>
        ) : null}
        <Field label="Per page">
          {(props) => (
            <select {...props} name="pageSize" defaultValue={String(filters.pageSize)}>
              {[10, 20, 50, 100].map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          )}
        </Field>
        <FilterActions path={path} />
      </form>
    </FilterPanel>
  );
}

/** Wide enough for the filters to stay open: below it (a phone) they start folded. */
const WIDE = '(min-width: 40rem)';

/**
 * A list's filters behind a "Filters" button (aria-expanded): open at first on a desktop, folded
 * on a phone so the list comes first.
 */
export function FilterPanel({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(() => window.matchMedia(WIDE).matches);
  const id = useId();
  return (
    <div className="filter-panel">
      <button
        type="button"
        className="button button-small filter-toggle"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
      >
        Filters
      </button>
      <div id={id} hidden={!open}>
        {children}
      </div>
    </div>
  );
}

export function Pager({
  pageNumber,
  nextCursor,
  onNext,
  onPrevious,
  children,
}: {
  pageNumber: number;
  nextCursor: string | null | undefined;
  onNext: (cursor: string) => void;
  onPrevious: () => void;
  children?: ReactNode;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button" disabled={pageNumber <= 1} onClick={onPrevious}>
        ← Previous page
      </button>
      <span aria-live="polite">Page {pageNumber}</span>
      <button type="button" className="button" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        Next page →
      </button>
      {children}
    </nav>
  );
}

/**
 * A table row that opens `to` when clicked anywhere (buttons and links inside keep their own
 * action). Keyboard and screen-reader users get the same through the row's one real link.
 */
export function LinkedRow({ to, children }: { to: string; children: ReactNode }) {
  const open = (event: MouseEvent<HTMLTableRowElement>) => {
    const target = event.target as HTMLElement;
    if (target.closest('a, button, input, select, textarea, summary')) return;
    if (window.getSelection()?.toString()) return; // selecting text is not a click
    navigate(to);
  };
  return (
    <tr className="row-link" onClick={open}>
      {children}
    </tr>
  );
}

/** The order page of an order number (P… payment, W… payout). */
export const orderPath = (orderNo: string) =>
  orderNo.startsWith('W') ? `/payouts/${orderNo}` : `/payments/${orderNo}`;

/** The row's link: the order number, kept on one line. */
export function OrderLink({ orderNo }: { orderNo: string }) {
  return (
    <Link to={orderPath(orderNo)} className="mono order-no">
      {orderNo}
    </Link>
  );
}

/** "12 payments" next to a list: every match of the filters, not only this page. */
export function TotalLine({ total, noun }: { total: number; noun: string }) {
  return (
    <p className="total" data-testid="total">
      {total === 1 ? `1 ${noun.replace(/s$/, '')} matches` : `${total.toLocaleString(LOCALE)} ${noun} match`} these
      filters.
    </p>
  );
}
