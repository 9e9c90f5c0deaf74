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

/** A number from the address (a time in ms, a page size), or undefined when absent or not a number. */
export const numberOrUndefined = (text: string | null) => {
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
  return { filters, key, ...usePages(key) };
}

/**
 * The cursor stack of the pages of a list seen so far, for the filters `key` (the address's
 * query): it restarts when they change. The cursor of the page to show, its number, and the
 * Pager's next and previous.
 */
export function usePages(key: string) {
  const [pages, setPages] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  useEffect(() => {
    if (pages.key !== key) setPages({ key, cursors: [] });
  }, [key, pages.key]);
  const cursors = pages.key === key ? pages.cursors : [];
  return {
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
 * A filter form's submit handler: the list's address becomes `path` with the form's fields
 * `names` as its query, in that order. Each field is its trimmed text; `from` and `to` (the
 * DateRangeFields) are local times, sent as ms; a field left at its value in `defaults` (the
 * page size of 20, say) is left out of the address.
 */
export function submitFilters(path: string, names: readonly string[], defaults: Readonly<Record<string, string>> = {}) {
  const value = (name: string, text: string) => {
    if (text === defaults[name]) return '';
    return name === 'from' || name === 'to' ? fromLocalInput(text) : text;
  };
  return (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = names.map((name) => [name, value(name, String(form.get(name) ?? '').trim())] as const);
    navigate(path + queryString(Object.fromEntries(query)));
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

/** A drop-down's options, each named by its value. */
function Options({ values }: { values: readonly (string | number)[] }) {
  return (
    <>
      {values.map((v) => (
        <option key={v} value={v}>
          {v}
        </option>
      ))}
    </>
  );
}

/** A filter's drop-down: `any` (the empty value, no filter) first, then each option as it is named. */
export function SelectFilter({
  label,
  name,
  value,
  any,
  options,
}: {
  label: string;
  name: string;
  value: string;
  any: string;
  options: readonly string[];
}) {
  return (
    <Field label={label}>
      {(props) => (
        <select {...props} name={name} defaultValue={value}>
          <option value="">{any}</option>
          <Options values={options} />
        </select>
      )}
    </Field>
  );
}

/** The Status filter (`status`) of a list of orders. */
export function StatusFilter({ statuses, value }: { statuses: readonly string[]; value: string }) {
  return <SelectFilter label="Status" name="status" value={value} any="Any status" options={statuses} />;
}

/** The Currency filter (`currency`). */
export function CurrencyFilter({ currencies, value }: { currencies: readonly string[]; value: string }) {
  return <SelectFilter label="Currency" name="currency" value={value} any="All currencies" options={currencies} />;
}

/** How many rows a page shows (`pageSize`): 20 unless chosen. */
export function PageSizeField({ value }: { value: string }) {
  return (
    <Field label="Per page">
      {(props) => (
        <select {...props} name="pageSize" defaultValue={value}>
          <Options values={[10, 20, 50, 100]} />
        </select>
      )}
    </Field>
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
  const submit = submitFilters(path, ['status', 'currency', 'q', 'from', 'to', 'pageSize'], { pageSize: '20' });
  return (
    <FilterPanel>
      <form className="filters" onSubmit={submit} aria-label={label} key={JSON.stringify(filters)}>
        {statuses ? <StatusFilter statuses={statuses} value={filters.status} /> : null}
        {currencies ? <CurrencyFilter currencies={currencies} value={filters.currency} /> : null}
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
        <PageSizeField value={String(filters.pageSize)} />
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
