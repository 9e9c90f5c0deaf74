import type { ReactNode } from 'react';
import { EnvironmentBadge, NotFound } from './components';
import { type Door, SessionGate } from './door';
import { CredentialsPage } from './pages/credentials';
import { BalancesPage } from './pages/money';
import { PaymentPage, PaymentsPage, PayoutPage, PayoutsPage } from './pages/orders';
import { EventsPage } from './pages/events';
import { OverviewPage } from './pages/overview';
import { RejectedPage } from './pages/rejected';
import { AccountPage } from './pages/account';
import { AuditPage } from './pages/audit';
import { PeoplePage } from './pages/people';
import { SessionContext } from './session';
import { Link, match, navigate, Redirect, useLocation } from './router';
import { type NavLink, Shell } from './shell';
import type { Session } from './types';

/** The merchant portal's words on the pages before it (./door.tsx). */
const PORTAL: Door<Session> = {
  name: 'the portal',
  context: SessionContext,
  signIn: {
    title: 'Sign in to the merchant portal',
    hint: (
      <>
        No account yet? An operator invites you with <code>paygate user invite</code>; the link sets your password.
      </>
    ),
  },
  // Every sign-in starts at the overview.
  signedInPath: '/',
  setup: {
    invitationInvalid: 'This link is unknown, already used or expired. Ask your operator for a new invitation.',
  },
  secondFactorRequired: 'Your merchant requires a second factor of everyone. Set up an authenticator app to go on.',
};

export function App() {
  return (
    <SessionGate door={PORTAL}>
      {(session, signOut) => (
        <PortalShell
          session={session}
          // The top bar's Sign out ends at /signin; the one on the pages before the portal leaves the address.
          onSignOut={() => void signOut().then(() => navigate('/signin', { replace: true }))}
        >
          <Routes session={session} />
        </PortalShell>
      )}
    </SessionGate>
  );
}

function Routes({ session }: { session: Session }) {
  const { path } = useLocation();
  const sandbox = session.merchant.environment === 'sandbox';
  let params: Record<string, string> | undefined;
  if (path === '/' || path === '/signin' || path === '/setup') return <Redirect to="/overview" />;
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
    <NotFound>
      <Link to="/payments">Go to payments</Link>
    </NotFound>
  );
}

function PortalShell({
  session,
  onSignOut,
  children,
}: {
  session: Session;
  onSignOut: () => void;
  children: ReactNode;
}) {
  const { environment } = session.merchant;
  const sandbox = environment === 'sandbox';
  const links: NavLink[] = [
    ['/overview', 'Overview'],
    ['/payments', 'Payments'],
    ['/payouts', 'Payouts'],
    ['/events', 'Events'],
    ['/balances', 'Balances'],
    ['/credentials', 'Credentials'],
    ...(sandbox ? ([['/rejected', 'Refused requests']] as NavLink[]) : []),
    // Owners' people and audit trail share one entry, to keep the bar on one row.
    ...(session.capabilities.includes('people') ? ([['/people', 'Team']] as NavLink[]) : []),
  ];
  return (
    <Shell
      kind={environment}
      home="/overview"
      badge={
        <>
          <EnvironmentBadge environment={environment} />
          <span className="merchant" title={session.merchant.accessKey}>
            {session.merchant.name}
          </span>
        </>
      }
      links={links}
      alsoCurrent={(to, path) => to === '/people' && path === '/audit'}
      account={
        <Link to="/account" className="muted small email" title={`${session.email} (${session.role})`}>
          {session.email}
        </Link>
      }
      onSignOut={onSignOut}
      notice={
        sandbox ? (
          <p className="env-strip">Sandbox: test data only. No real money moves.</p>
        ) : (
          <p className="env-strip env-strip-live">Production: live orders and real money.</p>
        )
      }
    >
      {children}
    </Shell>
  );
}
