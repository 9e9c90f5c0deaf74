/**
 * The pages before the back office itself: sign-in (password, then the second factor, or a
 * passkey alone), the setup an invitation link opens, the second factor's code, and the
 * authenticator app's setup that an operator without a second factor must do first.
 */
import { startAuthentication } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { useAction } from '../../action';
import { AuthCard, ErrorAlert, Field } from '../../components';
import { CodeForm, TotpSetup } from '../../pages/second-factor';
import { ApiError, api, setCsrfToken } from '../../api';
import { navigate, useLocation, usePageTitle } from '../../router';
import type { OperatorSession } from '../types';

function signInError(error: unknown): unknown {
  if (error instanceof ApiError && error.code === 'LOGIN_FAILED') return new Error('Wrong email or password.');
  if (error instanceof ApiError && error.code === 'LOGIN_LOCKED') {
    const minutes = Math.max(1, Math.ceil((error.retryAfterSeconds ?? 900) / 60));
    return new Error(`Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
  }
  return error;
}

export function SignInPage({ onSignedIn }: { onSignedIn: (session: OperatorSession) => void }) {
  usePageTitle('Sign in');
  const { search } = useLocation();
  const [email, setEmail] = useState(search.get('email') ?? '');
  const [password, setPassword] = useState('');
  const action = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const session = await api.post<OperatorSession>('/session', { email, password });
      setCsrfToken(session.csrfToken);
      setPassword('');
      onSignedIn(session);
    });
  };
  const withPasskey = () =>
    void action.run(async () => {
      const optionsJSON = await api.post<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        '/session/passkey/options',
        {},
      );
      const response = await startAuthentication({ optionsJSON });
      const session = await api.post<OperatorSession>('/session/passkey', { response });
      setCsrfToken(session.csrfToken);
      onSignedIn(session);
    });

  return (
    <AuthCard title="Sign in to the back office">
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
      <p className="hint">
        For the platform&apos;s operators. An admin invites you (the first one with <code>paygate operator invite</code>
        ); the link sets your password. Merchants&apos; people sign in to the portal at <a href="/portal/">/portal</a>.
      </p>
    </AuthCard>
  );
}

/**
 * The page an invitation link opens: `/backoffice/setup#token=…`. Setting the password signs the
 * operator in; the app goes on to the authenticator app's setup (a second factor is mandatory).
 */
export function SetupPage({ onSignedIn }: { onSignedIn: (session: OperatorSession) => void }) {
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
      const session = await api.post<OperatorSession>('/setup', { token, password });
      setCsrfToken(session.csrfToken);
      setPassword('');
      setConfirm('');
      // Drop the one-time token from the address bar and history.
      navigate('/', { replace: true });
      onSignedIn(session);
    });
  };
  const error =
    action.error instanceof ApiError && action.error.code === 'INVITATION_INVALID'
      ? new Error('This link is unknown, already used or expired. Ask an admin for a new invitation.')
      : action.error;

  return (
    <AuthCard title="Set your password">
      <p>Welcome to the Paygate back office. Choose a password; an authenticator app comes next.</p>
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

/** After the password, the sign-in asks for the second factor: a code, a recovery code or a passkey. */
export function SecondFactorSignIn({
  session,
  onDone,
  onSignOut,
}: {
  session: OperatorSession;
  onDone: (session: OperatorSession) => void;
  onSignOut: () => void;
}) {
  usePageTitle('Enter your code');
  return (
    <AuthCard title="Enter your code" onSignOut={onSignOut}>
      <p>
        Your password is right. Now your second factor:{' '}
        {[
          session.secondFactor.passkeys ? 'your passkey' : '',
          session.secondFactor.totp ? 'the code from your authenticator app, or one of your recovery codes' : '',
        ]
          .filter(Boolean)
          .join(', or ')}
        .
      </p>
      <CodeForm
        passkey={session.secondFactor.passkeys}
        submitLabel="Sign in"
        onCode={async (body) => {
          await api.post('/session/second-factor', body);
          const next = await api.get<OperatorSession>('/session');
          setCsrfToken(next.csrfToken);
          onDone(next);
        }}
      />
    </AuthCard>
  );
}

/** An operator always has a second factor: until one is set up, this is the only page. */
export function RequiredSetup({ onDone, onSignOut }: { onDone: () => void; onSignOut: () => void }) {
  usePageTitle('Set up a second factor');
  return (
    <AuthCard title="Set up a second factor" onSignOut={onSignOut}>
      <p>
        Every operator signs in with a second factor. Set up an authenticator app to go on; you can add a passkey from
        your account afterwards.
      </p>
      <TotpSetup onDone={onDone} />
    </AuthCard>
  );
}
