import { type ReactNode, useEffect, useState } from 'react';
import { ApiError, api, SIGNED_OUT_EVENT, setCsrfToken } from './api';
import { EnvironmentBadge, ErrorAlert, Loading, PageHeading } from './components';
import { CredentialsPage } from './pages/credentials';
import { BalancesPage } from './pages/money';
import { PaymentPage, PaymentsPage, PayoutPage, PayoutsPage } from './pages/orders';
import { EventsPage } from './pages/events';
import { OverviewPage } from './pages/overview';
import { RejectedPage } from './pages/rejected';
import { AccountPage } from './pages/account';
import { AuditPage } from './pages/audit';
import { PeoplePage } from './pages/people';
import { RequiredSetup, SecondFactorSignIn } from './pages/second-factor';
import { SessionContext } from './session';
import { StepUpDialog } from './stepup';
import { SetupPage, SignInPage } from './pages/auth';
import { Link, match, navigate, useLocation } from './router';
import type { Session } from './types';

type SessionState = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; session: Session };

export function App() {
  const { path } = useLocation();
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  const [startError, setStartError] = useState<unknown>();

  useEffect(() => {
    if (path === '/setup') return;
    let live = true;
    api.get<Session>('/session').then(
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

  if (path === '/setup') return <SetupPage onSignedIn={(session) => setState({ kind: 'signed-in', session })} />;
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
        <Loading what="the portal" />
      </main>
    );
  }
  if (state.kind === 'signed-out') {
    return <SignInPage onSignedIn={(session) => setState({ kind: 'signed-in', session })} />;
  }
  const signOut = async () => {
    try {
      await api.post('/session/logout');
    } catch {
      // Gone already: signed out either way.
    }
    setCsrfToken(undefined);
    setState({ kind: 'signed-out' });
  };
  const refresh = async () => {
    const session = await api.get<Session>('/session');
    setState({ kind: 'signed-in', session });
  };
  const factor = state.session.secondFactor;
  if (factor.pending) {
    return (
      <SecondFactorSignIn
        session={state.session}
        onDone={(session) => setState({ kind: 'signed-in', session })}
        onSignOut={() => void signOut()}
      />
    );
  }
  if (factor.required && !factor.enabled) {
    return <RequiredSetup onDone={() => void refresh()} onSignOut={() => void signOut()} />;
  }
  return (
    <SessionContext.Provider value={state.session}>
      <StepUpDialog />
      <Shell session={state.session} onSignedOut={() => setState({ kind: 'signed-out' })}>
        <Routes path={path} session={state.session} />
      </Shell>
    </SessionContext.Provider>
  );
}

function Routes({ path, session }: { path: string; session: Session }) {
  const sandbox = session.merchant.environment === 'sandbox';
  let params: Record<string, string> | undefined;
  if (path === '/' || path === '/signin') return <Redirect to="/overview" />;
  if (path === '/overview') return <OverviewPage />;
  if (path === '/events') return <EventsPage />;
  if (path === '/credentials') return <CredentialsPage />;
  if (path === '/payments') return <PaymentsPage />;
  if ((params = match('/payments/:orderNo', path)))
    return <PaymentPage key={params.orderNo} orderNo={params.orderNo as string} sandbox={sandbox} />;
  if (path === '/payouts') return <PayoutsPage />;
  if ((params = match('/payouts/:orderNo', path)))
    return <PayoutPage key={params.orderNo} orderNo={params.orderNo as string} sandbox={sandbox} />;
  if (path === '/balances') return <BalancesPage />;
  if (path === '/rejected' && sandbox) return <RejectedPage />;
  if (path === '/account') return <AccountPage />;
  if (path === '/people' && session.capabilities.includes('people')) return <PeoplePage />;
  if (path === '/audit' && session.capabilities.includes('audit')) return <AuditPage />;
  return (
    <>
      <PageHeading>Page not found</PageHeading>
      <p>
        There is no page at this address. <Link to="/payments">Go to payments</Link>.
      </p>
    </>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Shell({ session, onSignedOut, children }: { session: Session; onSignedOut: () => void; children: ReactNode }) {
  const { path } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const sandbox = session.merchant.environment === 'sandbox';
  const links: [string, string][] = [
    ['/overview', 'Overview'],
    ['/payments', 'Payments'],
    ['/payouts', 'Payouts'],
    ['/events', 'Events'],
    ['/balances', 'Balances'],
    ['/credentials', 'Credentials'],
    ...(sandbox ? ([['/rejected', 'Refused requests']] as [string, string][]) : []),
    // Owners' people and audit trail share one entry, to keep the bar on one row.
    ...(session.capabilities.includes('people') ? ([['/people', 'Team']] as [string, string][]) : []),
  ];
  const signOut = async () => {
    try {
      await api.post('/session/logout');
    } catch {
      // The session may be gone already; either way we are signed out here.
    }
    setCsrfToken(undefined);
    onSignedOut();
    navigate('/signin', { replace: true });
  };
  useEffect(() => setMenuOpen(false), [path]);

  return (
    <div className={`shell shell-${session.merchant.environment}`}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to="/overview" className="brand">
            Paygate
          </Link>
          <EnvironmentBadge environment={session.merchant.environment} />
          <span className="merchant" title={session.merchant.accessKey}>
            {session.merchant.name}
          </span>
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
                const current = path === to || path.startsWith(`${to}/`) || (to === '/people' && path === '/audit');
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
              <Link to="/account" className="muted small email" title={`${session.email} (${session.role})`}>
                {session.email}
              </Link>
              <button type="button" className="button button-small" onClick={() => void signOut()}>
                Sign out
              </button>
            </div>
          </nav>
        </div>
      </header>
      {sandbox ? (
        <p className="env-strip">Sandbox: test data only. No real money moves.</p>
      ) : (
        <p className="env-strip env-strip-live">Production: live orders and real money.</p>
      )}
      <main id="main" className="content">
        {children}
      </main>
    </div>
  );
}
