import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { ApiError } from './api';
import { Link } from './router';
import type { Environment } from './types';

/** Loads data on mount and whenever `deps` change; `reload` fetches again. */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
    // `deps` are the caller's: `load` is a new closure on every render.
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** A page heading that takes focus when the page opens (screen readers announce the new page). */
export function PageHeading({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1} className="page-title">
      {children}
    </h1>
  );
}

/** What an address that is no page of the app shows, with a link on (`children`). */
export function NotFound({ children }: { children: ReactNode }) {
  return (
    <>
      <PageHeading>Page not found</PageHeading>
      <p>There is no page at this address. {children}.</p>
    </>
  );
}

/**
 * The frame of the pages shown before the app itself (sign-in, password setup, the second
 * factor): the brand, the page's heading, the page, and a Sign out button when `onSignOut` is given.
 */
export function AuthCard({
  title,
  onSignOut,
  children,
}: {
  title: string;
  onSignOut?: () => void;
  children: ReactNode;
}) {
  return (
    <main id="main" className="auth">
      <div className="auth-card">
        <p className="brand">Paygate</p>
        <PageHeading>{title}</PageHeading>
        {children}
        {onSignOut ? (
          <p>
            <button type="button" className="button button-small" onClick={onSignOut}>
              Sign out
            </button>
          </p>
        ) : null}
      </div>
    </main>
  );
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.fieldErrors.length > 0) {
      // Field errors are sentences that name their field.
      const sentences = error.fieldErrors.map((e) =>
        e.message.startsWith(`${e.field} `) ? e.message : `${e.field} ${e.message}`,
      );
      return `${error.message}: ${sentences.join('; ')}`;
    }
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** An error announced to assistive technology as soon as it appears. */
export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div className="alert alert-error" role="alert">
      {messageOf(error)}
    </div>
  );
}

/**
 * A card: a section named by its heading, so that screen readers list it by its title.
 * `className` adds to `card` (a receipt prints alone, the sandbox panel stands out).
 */
export function Card({
  id,
  title,
  className,
  children,
}: {
  id: string;
  title: ReactNode;
  className?: string;
  children: ReactNode;
}) {
  return (
    <section className={className ? `card ${className}` : 'card'} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** Where a load stands: its error, or a loading line until there is something to show. */
export function LoadStatus({
  state,
  what,
}: {
  state: { readonly data?: unknown; readonly error?: unknown; readonly loading: boolean };
  what: string;
}) {
  return (
    <>
      <ErrorAlert error={state.error} />
      {state.loading && !state.data ? <Loading what={what} /> : null}
    </>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** Times with their zone: the one place is time.tsx (the back office imports it too). */
export { Time } from './time';

const STATUS_TONE: Readonly<Record<string, string>> = {
  SUCCEEDED: 'good',
  delivered: 'good',
  active: 'good',
  FAILED: 'bad',
  failed: 'bad',
  EXPIRED: 'bad',
  CANCELED: 'neutral',
  REFUNDED: 'warn',
  retired: 'neutral',
  enabled: 'neutral',
  PENDING: 'info',
  PROCESSING: 'info',
  pending: 'info',
  retrying: 'warn',
};

/** The colour family of a status: good, bad, warn, info or neutral. */
export const toneOf = (status: string) => STATUS_TONE[status] ?? 'neutral';

/** A status as text in a coloured pill (the colour is never the only signal). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${STATUS_TONE[status] ?? 'neutral'}`}>{status}</span>;
}

export function EnvironmentBadge({ environment }: { environment: Environment }) {
  return (
    <span
      className={`env env-${environment}`}
      title={environment === 'sandbox' ? 'Test data: no real money moves' : 'Live: real money'}
    >
      {environment === 'sandbox' ? 'Sandbox' : 'Production'}
    </span>
  );
}

/**
 * Copies `text` to the clipboard and says so in a polite live region. Where the clipboard API is
 * unavailable (plain http on another host), the text is selected for the user to copy.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState<string>('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('Copied');
    } catch {
      setDone('Select the text and copy it');
    }
    window.setTimeout(() => setDone(''), 2500);
  };
  return (
    <span className="copy">
      <button type="button" className="button button-small" onClick={() => void copy()} aria-label={`Copy ${label}`}>
        Copy
      </button>
      <span className="copy-status" role="status" aria-live="polite">
        {done}
      </span>
    </span>
  );
}

/** A value shown in full (monospace, wrapping) with a copy button. */
export function CopyableValue({ value, label }: { value: string; label: string }) {
  return (
    <div className="copyable">
      <code className="mono" data-testid={`value-${label.replace(/\W+/g, '-').toLowerCase()}`}>
        {value}
      </code>
      <CopyButton text={value} label={label} />
    </div>
  );
}

/** A labelled form control with an optional hint, wired with aria-describedby. */
export function Field({
  label,
  hint,
  children,
}: {
  label: string;
  hint?: string;
  children: (props: { id: string; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(hint ? { 'aria-describedby': hintId } : {}) })}
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** A form's submit button on a line of its own, with an optional note beside it. */
export function SubmitButton({
  disabled,
  note,
  children,
}: {
  disabled: boolean;
  note?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div>
      <button type="submit" className="button button-primary" disabled={disabled}>
        {children}
      </button>
      {note}
    </div>
  );
}

/**
 * A small button in a table row or an item's header. `label` names it in full for screen readers
 * (the visible text alone, "Remove", would not say what it removes); `danger` marks one that
 * removes or ends something.
 */
export function RowButton({
  label,
  onClick,
  disabled,
  danger = false,
  title,
  children,
}: {
  label: string;
  onClick: () => void;
  disabled: boolean;
  danger?: boolean;
  title?: string;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className={danger ? 'button button-danger button-small' : 'button button-small'}
      disabled={disabled}
      onClick={onClick}
      aria-label={label}
      title={title}
    >
      {children}
    </button>
  );
}

/** Definition list of label/value pairs; undefined values are left out. */
export function Details({ items }: { items: [string, ReactNode | undefined][] }) {
  return (
    <dl className="details">
      {items
        .filter(([, value]) => value !== undefined && value !== null && value !== '')
        .map(([label, value]) => (
          <div key={label} className="details-row">
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

/** A success message in a live region that is always present (so the change is announced). */
export function Notice({ text }: { text: string }) {
  return (
    <div role="status" className={text ? 'alert alert-good' : 'live-empty'}>
      {text}
    </div>
  );
}

/**
 * What the last write of a page or section left: its notice, or its error. `loadError`, the
 * error of loading the section, shows when the last write left none.
 */
export function ActionStatus({
  action,
  loadError,
}: {
  action: { readonly notice: string; readonly error: unknown };
  loadError?: unknown;
}) {
  return (
    <>
      <Notice text={action.notice} />
      <ErrorAlert error={action.error ?? loadError} />
    </>
  );
}

/** The owners' Team area: its two pages, people and the audit trail. */
export function TeamTabs({ current }: { current: 'people' | 'audit' }) {
  const tabs: [string, string, 'people' | 'audit'][] = [
    ['/people', 'People', 'people'],
    ['/audit', 'Audit trail', 'audit'],
  ];
  return (
    <nav aria-label="Team" className="subnav">
      {tabs.map(([to, label, key]) => (
        <Link key={key} to={to} className="button button-small" aria-current={key === current ? 'page' : undefined}>
          {label}
        </Link>
      ))}
    </nav>
  );
}
