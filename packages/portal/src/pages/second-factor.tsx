import { startAuthentication } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { ApiError, api, setCsrfToken } from '../api';
import { ErrorAlert, Field, Notice, PageHeading } from '../components';
import { usePageTitle } from '../router';
import type { Session } from '../types';

function codeError(error: unknown): unknown {
  if (error instanceof ApiError && error.code === 'SECOND_FACTOR_FAILED') {
    return new Error('That code is wrong or was used already. Wait for the next one and try again.');
  }
  if (error instanceof ApiError && error.code === 'LOGIN_LOCKED') {
    const minutes = Math.max(1, Math.ceil((error.retryAfterSeconds ?? 900) / 60));
    return new Error(`Too many wrong codes. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
  }
  return error;
}

/** A code box (a TOTP code, or a recovery code when `recovery`), used by sign-in, step-up and removal. */
export function CodeForm({
  submitLabel,
  onCode,
  passkey = false,
}: {
  submitLabel: string;
  onCode: (body: { code: string } | { recoveryCode: string } | { passkey: unknown }) => Promise<void>;
  /** Offer the person's passkey too (they have one). */
  passkey?: boolean;
}) {
  const [recovery, setRecovery] = useState(false);
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onCode(recovery ? { recoveryCode: value.trim() } : { code: value.replace(/\s/g, '') });
      setValue('');
    } catch (caught) {
      setError(codeError(caught));
    } finally {
      setBusy(false);
    }
  };
  const usePasskey = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const optionsJSON = await api.post<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        '/session/second-factor/options',
        {},
      );
      await onCode({ passkey: await startAuthentication({ optionsJSON }) });
    } catch (caught) {
      setError(codeError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={(event) => void submit(event)} className="stack">
      <ErrorAlert error={error} />
      {passkey ? (
        <div>
          <button type="button" className="button button-primary" disabled={busy} onClick={() => void usePasskey()}>
            Use your passkey
          </button>
        </div>
      ) : null}
      <Field
        label={recovery ? 'Recovery code' : 'Code from your authenticator app'}
        hint={recovery ? 'One of the ten codes you saved; each works once.' : 'Six digits; a new one every 30 seconds.'}
      >
        {(props) => (
          <input
            {...props}
            type="text"
            name="code"
            autoComplete="one-time-code"
            inputMode={recovery ? 'text' : 'numeric'}
            required
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
        )}
      </Field>
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Checking…' : submitLabel}
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setRecovery(!recovery);
            setValue('');
          }}
        >
          {recovery ? 'Use the app instead' : 'Use a recovery code'}
        </button>
      </div>
    </form>
  );
}

/** After the password, a sign-in with a second factor asks for its code. */
export function SecondFactorSignIn({
  session,
  onDone,
  onSignOut,
}: {
  session: Session;
  onDone: (session: Session) => void;
  onSignOut: () => void;
}) {
  usePageTitle('Enter your code');
  return (
    <main id="main" className="auth">
      <div className="auth-card">
        <p className="brand">Paygate</p>
        <PageHeading>Enter your code</PageHeading>
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
            const session = await api.get<Session>('/session');
            setCsrfToken(session.csrfToken);
            onDone(session);
          }}
        />
        <p>
          <button type="button" className="button button-small" onClick={onSignOut}>
            Sign out
          </button>
        </p>
      </div>
    </main>
  );
}

/** Setting up TOTP: the QR code and its text secret, a first code, then the recovery codes (shown once). */
export function TotpSetup({ onDone }: { onDone: () => void }) {
  const [enrollment, setEnrollment] = useState<{ secret: string; qrCode: string; uri: string }>();
  const [codes, setCodes] = useState<string[]>();
  const [error, setError] = useState<unknown>();
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);

  const start = async () => {
    setError(undefined);
    try {
      setEnrollment(await api.post('/second-factor/totp', {}));
    } catch (caught) {
      setError(caught);
    }
  };
  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await api.post<{ recoveryCodes: string[] }>('/second-factor/totp/confirm', {
        code: value.replace(/\s/g, ''),
      });
      setCodes(result.recoveryCodes);
    } catch (caught) {
      setError(codeError(caught));
    } finally {
      setBusy(false);
    }
  };

  if (codes) {
    return (
      <div className="stack">
        <Notice text="Your authenticator app is set up: sign-ins now ask for its code." />
        <p>
          <strong>Save these recovery codes now</strong> (they are shown only once). Each one signs you in once if you
          lose your phone.
        </p>
        <ul className="recovery-codes mono" aria-label="Recovery codes">
          {codes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
        <div>
          <button type="button" className="button button-primary" onClick={onDone}>
            I saved them
          </button>
        </div>
      </div>
    );
  }
  if (!enrollment) {
    return (
      <div className="stack">
        <ErrorAlert error={error} />
        <div>
          <button type="button" className="button button-primary" onClick={() => void start()}>
            Set up an authenticator app
          </button>
        </div>
      </div>
    );
  }
  return (
    <form className="stack" onSubmit={(event) => void confirm(event)}>
      <p>Scan this QR code with your authenticator app, or type the secret into it.</p>
      <img src={enrollment.qrCode} width={220} height={220} alt="QR code of the authenticator app's secret" />
      <p>
        Secret:{' '}
        <code className="mono" data-testid="totp-secret">
          {enrollment.secret}
        </code>
      </p>
      <ErrorAlert error={error} />
      <Field label="First code from the app" hint="Six digits: it confirms the app is set up right.">
        {(props) => (
          <input
            {...props}
            type="text"
            name="code"
            autoComplete="one-time-code"
            inputMode="numeric"
            required
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
        )}
      </Field>
      <div>
        <button type="submit" className="button button-primary" disabled={busy}>
          Turn on
        </button>
      </div>
    </form>
  );
}

/** A merchant that requires a second factor sends a person without one here before anything else. */
export function RequiredSetup({ onDone, onSignOut }: { onDone: () => void; onSignOut: () => void }) {
  usePageTitle('Set up a second factor');
  return (
    <main id="main" className="auth">
      <div className="auth-card">
        <p className="brand">Paygate</p>
        <PageHeading>Set up a second factor</PageHeading>
        <p>Your merchant requires a second factor of everyone. Set up an authenticator app to go on.</p>
        <TotpSetup onDone={onDone} />
        <p>
          <button type="button" className="button button-small" onClick={onSignOut}>
            Sign out
          </button>
        </p>
      </div>
    </main>
  );
}
