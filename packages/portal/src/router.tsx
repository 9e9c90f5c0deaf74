import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from 'react';
import { SITE } from './site';

/** The app lives under this path; routes below are relative to it. */
export const BASE = SITE.base;

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

const snapshot = () => window.location.pathname + window.location.search;

/** The current app path (without the app's base, /portal or /backoffice) and its search parameters. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const current = useSyncExternalStore(subscribe, snapshot);
  const [pathname = '', search = ''] = current.split('?');
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) || '/' : pathname;
  return { path: path.length > 1 ? path.replace(/\/$/, '') : path, search: new URLSearchParams(search) };
}

/** Goes to an app path (e.g. `/payments?status=FAILED`). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = BASE + (to === '/' ? '/' : to);
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  notify();
}

/** Goes on to `to` in place of the address it is shown at (the app's start page for `/`, say). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** A real link (it opens in a new tab, is keyboard-focusable) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={handle} {...rest} />;
}

/** Matches `/payments/:orderNo`-style patterns; returns the parameters or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/');
  const have = path.split('/');
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const h = have[i] as string;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(h);
    else if (w !== h) return undefined;
  }
  return params;
}

/** Sets the document title, with the app's name. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · ${SITE.title}`;
  }, [title]);
}
