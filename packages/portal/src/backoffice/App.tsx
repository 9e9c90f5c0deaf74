import type { ReactNode } from 'react';
import { NotFound } from '../components';
import { type Door, SessionGate } from '../door';
import { AccountPage } from '../pages/account';
import { AuditPage } from './pages/audit';
import { ChannelsPage } from './pages/channels';
import { EventsPage } from './pages/events';
import { MerchantPage, MerchantsPage } from './pages/merchants';
import { MoneyPage } from './pages/money';
import { OperatorsPage } from './pages/operators';
import { OrderPage } from './pages/order';
import { SearchPage } from './pages/search';
import { Link, match, Redirect, useLocation } from '../router';
import { type NavLink, Shell } from '../shell';
import { SessionContext } from './session';
import type { OperatorSession } from './types';

/** The back office's words on the pages before it (../door.tsx), for the platform's operators. */
const BACKOFFICE: Door<OperatorSession> = {
  name: 'the back office',
  context: SessionContext,
  signIn: {
    title: 'Sign in to the back office',
    hint: (
      <>
        For the platform&apos;s operators. An admin invites you (the first one with <code>paygate operator invite</code>
        ); the link sets your password. Merchants&apos; people sign in to the portal at <a href="/portal/">/portal</a>.
      </>
    ),
  },
  // A sign-in opens the address the operator came to (a link to an order); a sign-out starts again at the search.
  signedOutPath: '/',
  setup: {
    welcome: 'Welcome to the Paygate back office. Choose a password; an authenticator app comes next.',
    invitationInvalid: 'This link is unknown, already used or expired. Ask an admin for a new invitation.',
  },
  secondFactorRequired:
    'Every operator signs in with a second factor. Set up an authenticator app to go on; you can add a passkey from your account afterwards.',
};

export function App() {
  return (
    <SessionGate door={BACKOFFICE}>
      {(session, signOut) => (
        <BackofficeShell session={session} onSignOut={() => void signOut()}>
          <Routes session={session} />
        </BackofficeShell>
      )}
    </SessionGate>
  );
}

function Routes({ session }: { session: OperatorSession }) {
  const { path } = useLocation();
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
    <NotFound>
      <Link to="/search">Go to the search</Link>
    </NotFound>
  );
}

function BackofficeShell({
  session,
  onSignOut,
  children,
}: {
  session: OperatorSession;
  onSignOut: () => void;
  children: ReactNode;
}) {
  const { path } = useLocation();
  const links: NavLink[] = [
    ['/search', 'Search'],
    ['/merchants', 'Merchants'],
    ['/money', 'Money'],
    ['/channels', 'Channels'],
    ['/events', 'Events'],
    ...(session.capabilities.includes('audit') ? ([['/audit', 'Audit']] as NavLink[]) : []),
    ...(session.capabilities.includes('operators') ? ([['/operators', 'Operators']] as NavLink[]) : []),
  ];
  return (
    <Shell
      kind="backoffice"
      home="/search"
      badge={<span className="env env-backoffice">Back office</span>}
      links={links}
      // An order is found by the search and opened from it.
      alsoCurrent={(to, at) => to === '/search' && at.startsWith('/orders/')}
      account={
        <>
          <Link
            to="/account"
            className="muted small email"
            title={`${session.email} (${session.role})`}
            aria-current={path === '/account' ? 'page' : undefined}
          >
            {session.email}
          </Link>
          <span className="role-badge">{session.role}</span>
        </>
      }
      onSignOut={onSignOut}
    >
      {children}
    </Shell>
  );
}
