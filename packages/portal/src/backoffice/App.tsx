import { type ReactNode, useEffect, useState } from 'react';
import { ApiError, api, SIGNED_OUT_EVENT, setCsrfToken } from '../api';
import { ErrorAlert, Loading, PageHeading } from '../components';
import { AccountPage } from '../pages/account';
import { StepUpDialog } from '../stepup';
import { RequiredSetup, SecondFactorSignIn, SetupPage, SignInPage } from './pages/auth';
import { AuditPage } from './pages/audit';
import { ChannelsPage } from './pages/channels';
import { EventsPage } from './pages/events';
import { MerchantPage, MerchantsPage } from './pages/merchants';
import { MoneyPage } from './pages/money';
import { OperatorsPage } from './pages/operators';
import { OrderPage } from './pages/order';
import { SearchPage } from './pages/search';
import { Link, match, navigate, useLocation } from '../router';
import { SessionContext } from './session';
import type { OperatorSession } from './types';

type SessionState = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; session: OperatorSession };

export function App() {
  const { path } = useLocation();
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  const [startError, setStartError] = useState<unknown>();

  useEffect(() => {
    if (path === '/setup') return;
    let live = true;
    api.get<OperatorSession>('/session').then(
      (session) => {
        if (!live) return;
        setCsrfToken(session.csrfToken);
        setState({ kind: 'signed-in', session });
      },
      (error: unknown) => {
        if (!live) return;
        if (error instanceof ApiError && error.status === 401) setState({ kind: 'signed-out' });
        else setStartError(error);
      },
    );
    return () => {
      live = false;
    };
    // Only on start: afterwards sign-in and sign-out set the state themselves.
  }, []);

  useEffect(() => {
    const signedOut = () => setState({ kind: 'signed-out' });
    window.addEventListener(SIGNED_OUT_EVENT, signedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, signedOut);
  }, []);

  const signedIn = (session: OperatorSession) => setState({ kind: 'signed-in', session });
  if (path === '/setup' && state.kind !== 'signed-in') return <SetupPage onSignedIn={signedIn} />;
  if (startError) {
    return (
      <main id="main" className="auth">
        <ErrorAlert error={startError} />
      </main>
    );
  }
  if (state.kind === 'loading') {
    return (
      <main id="main" className="auth">
        <Loading what="the back office" />
      </main>
    );
  }
  if (state.kind === 'signed-out') return <SignInPage onSignedIn={signedIn} />;
  const signOut = async () => {
    try {
      await api.post('/session/logout');
    } catch {
      // Gone already: signed out either way.
    }
    setCsrfToken(undefined);
    setState({ kind: 'signed-out' });
    navigate('/', { replace: true });
  };
  const refresh = async () => {
    const session = await api.get<OperatorSession>('/session');
    setCsrfToken(session.csrfToken);
    signedIn(session);
  };
  const factor = state.session.secondFactor;
  if (factor.pending) {
    return <SecondFactorSignIn session={state.session} onDone={signedIn} onSignOut={() => void signOut()} />;
  }
  // A second factor is not optional for operators: none yet, and the session can only set one up.
  if (!factor.enabled) return <RequiredSetup onDone={() => void refresh()} onSignOut={() => void signOut()} />;
  return (
    <SessionContext.Provider value={state.session}>
      <StepUpDialog />
      <Shell session={state.session} onSignOut={() => void signOut()}>
        <Routes path={path} session={state.session} />
      </Shell>
    </SessionContext.Provider>
  );
}

function Routes({ path, session }: { path: string; session: OperatorSession }) {
  const can = (capability: OperatorSession['capabilities'][number]) => session.capabilities.includes(capability);
  let params: Record<string, string> | undefined;
  if (path === '/' || path === '/signin' || path === '/setup') return <Redirect to="/search" />;
  if (path === '/search') return <SearchPage />;
  if ((params = match('/orders/:orderNo', path)))
    return <OrderPage key={params.orderNo} orderNo={params.orderNo as string} />;
  if (path === '/merchants') return <MerchantsPage />;
  if ((params = match('/merchants/:accessKey', path)))
    return <MerchantPage key={params.accessKey} accessKey={params.accessKey as string} />;
  if (path === '/money') return <MoneyPage />;
  if (path === '/channels') return <ChannelsPage />;
  if (path === '/events') return <EventsPage />;
  if (path === '/audit' && can('audit')) return <AuditPage />;
  if (path === '/operators' && can('operators')) return <OperatorsPage />;
  if (path === '/account') return <AccountPage />;
  return (
    <>
      <PageHeading>Page not found</PageHeading>
      <p>
        There is no page at this address. <Link to="/search">Go to the search</Link>.
      </p>
    </>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Shell({
  session,
  onSignOut,
  children,
}: {
  session: OperatorSession;
  onSignOut: () => void;
  children: ReactNode;
}) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const links: [string, string][] = [
    ['/search', 'Search'],
    ['/merchants', 'Merchants'],
    ['/money', 'Money'],
    ['/channels', 'Channels'],
    ['/events', 'Events'],
    ...(session.capabilities.includes('audit') ? ([['/audit', 'Audit']] as [string, string][]) : []),
    ...(session.capabilities.includes('operators') ? ([['/operators', 'Operators']] as [string, string][]) : []),
  ];
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div className="shell shell-backoffice">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to="/search" className="brand">
            Paygate
          </Link>
          <span className="env env-backoffice">Back office</span>
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
                const current =
                  path === to || path.startsWith(`${to}/`) || (to === '/search' && path.startsWith('/orders/'));
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
              <Link
                to="/account"
                className="muted small email"
                title={`${session.email} (${session.role})`}
                aria-current={path === '/account' ? 'page' : undefined}
              >
                {session.email}
              </Link>
              <span className="role-badge">{session.role}</span>
              <button type="button" className="button button-small" onClick={onSignOut}>
                Sign out
              </button>
            </div>
          </nav>
        </div>
      </header>
      <main id="main" className="content">
        {children}
      </main>
    </div>
  );
}
