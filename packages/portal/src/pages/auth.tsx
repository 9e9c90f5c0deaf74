/**
 * The sign-in and the invitation's password setup, for either app: the portal and the back office
 * sign in through the same accounts API (server/src/modules/accounts), so the pages are one, and
 * each app's door (../door.tsx) gives them its own words.
 */
import { startAuthentication } from '@simplewebauthn/browser';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useAction } from '../action';
import { ApiError, api, setCsrfToken } from '../api';
import { AuthCard, ErrorAlert, Field } from '../components';
import type { DoorSession } from '../types';
import { navigate, useLocation, usePageTitle } from '../router';

function signInError(error: unknown): unknown {
  if (error instanceof ApiError && error.code === 'LOGIN_FAILED') return new Error('Wrong email or password.');
  if (error instanceof ApiError && error.code === 'LOGIN_LOCKED') {
    const minutes = Math.max(1, Math.ceil((error.retryAfterSeconds ?? 900) / 60));
    return new Error(`Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
  }
  return error;
}

/** The sign-in: a password (the second factor follows when the person has one), or a passkey alone. */
export function SignInPage<S extends DoorSession>({
  title,
  hint,
  signedInPath,
  onSignedIn,
}: {
  title: string;
  /** Under the form: how one comes to have an account. */
  hint: ReactNode;
  /** Where the app goes once signed in; unset, it stays at the address the person opened. */
  signedInPath: string | undefined;
  onSignedIn: (session: S) => void;
}) {
  usePageTitle('Sign in');
  const { search } = useLocation();
  const [email, setEmail] = useState(search.get('email') ?? '');
  const [password, setPassword] = useState('');
  const action = useAction();

  const signedIn = (session: S) => {
    setCsrfToken(session.csrfToken);
    onSignedIn(session);
    if (signedInPath) navigate(signedInPath, { replace: true });
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const session = await api.post<S>('/session', { email, password });
      setPassword('');
      signedIn(session);
    });
  };
  const withPasskey = () =>
    void action.run(async () => {
      const optionsJSON = await api.post<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        '/session/passkey/options',
        {},
      );
      const response = await startAuthentication({ optionsJSON });
      signedIn(await api.post<S>('/session/passkey', { response }));
    });

  return (
    <AuthCard title={title}>
      <ErrorAlert error={signInError(action.error)} />
      <form onSubmit={(event) => void submit(event)}>
        <Field label="Email">
          {(props) => (
            <input
              {...props}
              type="email"
              name="email"
              autoComplete="username"
              required
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          )}
        </Field>
        <Field label="Password">
          {(props) => (
            <input
              {...props}
              type="password"
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
        <button type="submit" className="button button-primary button-block" disabled={action.busy}>
          {action.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <button type="button" className="button button-block" disabled={action.busy} onClick={withPasskey}>
          Use a passkey
        </button>
      </p>
      <p className="hint">{hint}</p>
    </AuthCard>
  );
}

/**
 * The page an invitation link opens: `…/setup#token=…`. Setting the password signs the person
 * in: the app goes on from its start (or into the second factor's step, when one is needed).
 */
export function SetupPage<S extends DoorSession>({
  welcome,
  invitationInvalid,
  onSignedIn,
}: {
  /** A line above the form, if the app has one. */
  welcome: string | undefined;
  /** What to say when the link is unknown, used or expired: who gives a new one. */
  invitationInvalid: string;
  onSignedIn: (session: S) => void;
}) {
  usePageTitle('Set your password');
  const [token] = useState(() => new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const action = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (password !== confirm) {
      action.fail(new Error('The two passwords differ.'));
      return;
    }
    await action.run(async () => {
      const session = await api.post<S>('/setup', { token, password });
      setCsrfToken(session.csrfToken);
      setPassword('');
      setConfirm('');
      onSignedIn(session);
      // Drop the one-time token from the address bar and history.
      navigate('/', { replace: true });
    });
  };
  const error =
    action.error instanceof ApiError && action.error.code === 'INVITATION_INVALID'
      ? new Error(invitationInvalid)
      : action.error;

  return (
    <AuthCard title="Set your password">
      {welcome ? <p>{welcome}</p> : null}
      {!token ? (
        <div className="alert alert-error" role="alert">
          This page needs the link from your invitation (it ends in <code>#token=…</code>).
        </div>
      ) : null}
      <ErrorAlert error={error} />
      <form onSubmit={(event) => void submit(event)}>
        <Field label="New password" hint="At least 12 characters. A passphrase of several words works well.">
          {(props) => (
            <input
              {...props}
              type="password"
              name="new-password"
              autoComplete="new-password"
              minLength={12}
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </Field>
        <Field label="Repeat the password">
          {(props) => (
            <input
              {...props}
              type="password"
              name="confirm-password"
              autoComplete="new-password"
              minLength={12}
              required
              value={confirm}
              onChange={(event) => setConfirm(event.target.value)}
            />
          )}
        </Field>
        <button type="submit" className="button button-primary button-block" disabled={action.busy || !token}>
          {action.busy ? 'Saving…' : 'Set password'}
        </button>
      </form>
    </AuthCard>
  );
}
