import { startAuthentication } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { useAction } from '../action';
import { ApiError, api, setCsrfToken } from '../api';
import { AuthCard, ErrorAlert, Field } from '../components';
import { navigate, useLocation, usePageTitle } from '../router';
import type { Session } from '../types';

function signInError(error: unknown): string | undefined {
  if (!error) return undefined;
  if (error instanceof ApiError && error.code === 'LOGIN_FAILED') return 'Wrong email or password.';
  if (error instanceof ApiError && error.code === 'LOGIN_LOCKED') {
    const minutes = Math.max(1, Math.ceil((error.retryAfterSeconds ?? 900) / 60));
    return `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
  }
  return error instanceof Error ? error.message : String(error);
}

function setupError(error: unknown): unknown {
  if (error instanceof ApiError && error.code === 'INVITATION_INVALID') {
    return new Error('This link is unknown, already used or expired. Ask your operator for a new invitation.');
  }
  return error;
}

export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  usePageTitle('Sign in');
  const { search } = useLocation();
  const [email, setEmail] = useState(search.get('email') ?? '');
  const [password, setPassword] = useState('');
  const action = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const session = await api.post<Session>('/session', { email, password });
      setCsrfToken(session.csrfToken);
      setPassword('');
      onSignedIn(session);
      navigate('/', { replace: true });
    });
  };

  const withPasskey = () =>
    void action.run(async () => {
      const optionsJSON = await api.post<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        '/session/passkey/options',
        {},
      );
      const response = await startAuthentication({ optionsJSON });
      const session = await api.post<Session>('/session/passkey', { response });
      setCsrfToken(session.csrfToken);
      onSignedIn(session);
      navigate('/', { replace: true });
    });

  return (
    <AuthCard title="Sign in to the merchant portal">
      {action.error ? <ErrorAlert error={new Error(signInError(action.error))} /> : null}
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
      <p className="hint">
        No account yet? An operator invites you with <code>paygate user invite</code>; the link sets your password.
      </p>
    </AuthCard>
  );
}

/**
 * The page an invitation link opens: `/portal/setup#token=…`. Setting the password signs the
 * person in: the page goes on into the portal (or into the second-factor step, when one is needed).
 */
export function SetupPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
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
      const session = await api.post<Session>('/setup', { token, password });
      setCsrfToken(session.csrfToken);
      setPassword('');
      setConfirm('');
      onSignedIn(session);
      // Drop the one-time token from the address bar and history.
      navigate('/', { replace: true });
    });
  };

  return (
    <AuthCard title="Set your password">
      {!token ? (
        <div className="alert alert-error" role="alert">
          This page needs the link from your invitation (it ends in <code>#token=…</code>).
        </div>
      ) : null}
      <ErrorAlert error={setupError(action.error)} />
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
