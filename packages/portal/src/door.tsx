/**
 * The way into either app, the merchant portal or the back office: the session looked up on start,
 * the pages before the app (sign-in, the invitation's password setup, the second factor's step and
 * its required setup), then the app itself with its session. Both apps' people sign in through
 * one accounts module on the server, each audience at its own door; so here too the machinery is
 * one, and each app's `Door` holds only its words and the few places where it goes its own way.
 */
import { type Context, type ReactNode, useEffect, useState } from 'react';
import { ApiError, api, SIGNED_OUT_EVENT, setCsrfToken } from './api';
import { ErrorAlert, Loading } from './components';
import { SetupPage, SignInPage } from './pages/auth';
import { RequiredSetup, SecondFactorSignIn } from './pages/second-factor';
import { navigate, useLocation } from './router';
import { StepUpDialog } from './stepup';
import type { DoorSession } from './types';

/** One app's words on the pages before it, and where it sends the address on the way in and out. */
export interface Door<S extends DoorSession> {
  /** What is loading while the session is looked up: "Loading {name}…". */
  readonly name: string;
  /** The app's session context (its session.tsx), read by its pages and the step-up dialog. */
  readonly context: Context<S | undefined>;
  readonly signIn: {
    readonly title: string;
    /** Under the form: how one comes to have an account. */
    readonly hint: ReactNode;
  };
  /** Where a sign-in goes on to; unset, the app opens at the address the person came to. */
  readonly signedInPath?: string;
  /** Where a sign-out leaves the address; unset, it stays where it was. */
  readonly signedOutPath?: string;
  readonly setup: {
    /** A line above the password form, if any. */
    readonly welcome?: string;
    /** What a link that is unknown, used or expired is told: who gives a new one. */
    readonly invitationInvalid: string;
  };
  /** Why the second factor comes first, on the page that sets it up. */
  readonly secondFactorRequired: string;
}

type SessionState<S> = { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; session: S };

/**
 * Shows the pages before the app until its session is through them, then `children` with the
 * session and a sign-out (which the app's top bar offers), under the session context and the
 * step-up dialog. A session the server refuses later (the signed-out event) comes back to sign-in.
 */
export function SessionGate<S extends DoorSession>({
  door,
  children,
}: {
  door: Door<S>;
  children: (session: S, signOut: () => Promise<void>) => ReactNode;
}) {
  const { path } = useLocation();
  const [state, setState] = useState<SessionState<S>>({ kind: 'loading' });
  const [startError, setStartError] = useState<unknown>();

  useEffect(() => {
    // An invitation's link: the password set there makes the session.
    if (path === '/setup') return;
    let live = true;
    api.get<S>('/session').then(
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

  const signedIn = (session: S) => setState({ kind: 'signed-in', session });
  if (path === '/setup' && state.kind !== 'signed-in') {
    return (
      <SetupPage welcome={door.setup.welcome} invitationInvalid={door.setup.invitationInvalid} onSignedIn={signedIn} />
    );
  }
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
        <Loading what={door.name} />
      </main>
    );
  }
  if (state.kind === 'signed-out') {
    return (
      <SignInPage
        title={door.signIn.title}
        hint={door.signIn.hint}
        signedInPath={door.signedInPath}
        onSignedIn={signedIn}
      />
    );
  }
  const signOut = async () => {
    try {
      await api.post('/session/logout');
    } catch {
      // Gone already: signed out either way.
    }
    setCsrfToken(undefined);
    setState({ kind: 'signed-out' });
    if (door.signedOutPath) navigate(door.signedOutPath, { replace: true });
  };
  const refresh = async () => {
    const session = await api.get<S>('/session');
    setCsrfToken(session.csrfToken);
    signedIn(session);
  };
  const factor = state.session.secondFactor;
  if (factor.pending) {
    return <SecondFactorSignIn session={state.session} onDone={signedIn} onSignOut={() => void signOut()} />;
  }
  if (factor.required && !factor.enabled) {
    return (
      <RequiredSetup why={door.secondFactorRequired} onDone={() => void refresh()} onSignOut={() => void signOut()} />
    );
  }
  const { Provider } = door.context;
  return (
    <Provider value={state.session}>
      <StepUpDialog />
      {children(state.session, signOut)}
    </Provider>
  );
}
