/**
 * The frame of either app once signed in: the top bar (brand, what the app is looking at, the
 * primary navigation, the person and Sign out), then the page. The portal and the back office
 * each fill it with their own entries and words (App.tsx, backoffice/App.tsx).
 */
import { type ReactNode, useEffect, useState } from 'react';
import { Link, useLocation } from './router';

/** An entry of the primary navigation, `[to, label]`: current on its page and on the pages below it. */
export type NavLink = [to: string, label: string];

export function Shell({
  kind,
  home,
  badge,
  links,
  alsoCurrent,
  account,
  onSignOut,
  notice,
  children,
}: {
  /** Names the frame's look: `shell-{kind}` (the portal's environment, or the back office). */
  kind: string;
  /** Where the brand links. */
  home: string;
  /** Beside the brand: what the app is looking at. */
  badge: ReactNode;
  links: readonly NavLink[];
  /** Whether the entry `to` stands for the page at `path` too, beyond its own. */
  alsoCurrent?: (to: string, path: string) => boolean;
  /** The signed-in person, before Sign out. */
  account: ReactNode;
  onSignOut: () => void;
  /** A line under the bar, on every page. */
  notice?: ReactNode;
  children: ReactNode;
}) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);

  return (
    <div className={`shell shell-${kind}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to={home} className="brand">
            Paygate
          </Link>
          {badge}
          <button
            type="button"
            className="button menu-toggle"
            aria-expanded={menuOpen}
            aria-controls="primary-nav"
            onClick={() => setMenuOpen((open) => !open)}
          >
            Menu
          </button>
          <nav id="primary-nav" aria-label="Primary" className={menuOpen ? 'open' : undefined}>
            <ul>
              {links.map(([to, label]) => {
                const current = path === to || path.startsWith(`${to}/`) || (alsoCurrent?.(to, path) ?? false);
                return (
                  <li key={to}>
                    <Link to={to} aria-current={current ? 'page' : undefined}>
                      {label}
                    </Link>
                  </li>
                );
              })}
            </ul>
            <div className="account">
              {account}
              <button type="button" className="button button-small" onClick={onSignOut}>
                Sign out
              </button>
            </div>
          </nav>
        </div>
      </header>
      {notice}
      <main id="main" className="content">
        {children}
      </main>
    </div>
  );
}
