import { startAuthentication } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { useAction } from '../action';
import { ApiError, api, setCsrfToken } from '../api';
import { AuthCard, ErrorAlert, Field, Notice, SubmitButton } from '../components';
import type { DoorSession } from '../types';
import { usePageTitle } from '../router';

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

/** The box of a one-time code: six digits from the app when `numeric`, else a recovery code. */
function CodeField({
  label,
  hint,
  numeric,
  value,
  onChange,
}: {
  label: string;
  hint: string;
  numeric: boolean;
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <Field label={label} hint={hint}>
      {(props) => (
        <input
          {...props}
          type="text"
          name="code"
          autoComplete="one-time-code"
          inputMode={numeric ? 'numeric' : 'text'}
          required
          value={value}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  );
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
  const action = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      await onCode(recovery ? { recoveryCode: value.trim() } : { code: value.replace(/\s/g, '') });
      setValue('');
    });
  };
  const withPasskey = () =>
    void action.run(async () => {
      const optionsJSON = await api.post<Parameters<typeof startAuthentication>[0]['optionsJSON']>(
        '/session/second-factor/options',
        {},
      );
      await onCode({ passkey: await startAuthentication({ optionsJSON }) });
    });
  return (
    <form onSubmit={(event) => void submit(event)} className="stack">
      <ErrorAlert error={codeError(action.error)} />
      {passkey ? (
        <div>
          <button type="button" className="button button-primary" disabled={action.busy} onClick={withPasskey}>
            Use your passkey
          </button>
        </div>
      ) : null}
      <CodeField
        label={recovery ? 'Recovery code' : 'Code from your authenticator app'}
        hint={recovery ? 'One of the ten codes you saved; each works once.' : 'Six digits; a new one every 30 seconds.'}
        numeric={!recovery}
        value={value}
        onChange={setValue}
      />
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={action.busy}>
          {action.busy ? 'Checking…' : submitLabel}
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

/** After the password, the sign-in asks for the second factor: a code, a recovery code or a passkey. */
export function SecondFactorSignIn<S extends DoorSession>({
  session,
  onDone,
  onSignOut,
}: {
  session: S;
  onDone: (session: S) => void;
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
          const next = await api.get<S>('/session');
          setCsrfToken(next.csrfToken);
          onDone(next);
        }}
      />
    </AuthCard>
  );
}

/** Setting up TOTP: the QR code and its text secret, a first code, then the recovery codes (shown once). */
export function TotpSetup({ onDone }: { onDone: () => void }) {
  const [enrollment, setEnrollment] = useState<{ secret: string; qrCode: string; uri: string }>();
  const [codes, setCodes] = useState<string[]>();
  const [value, setValue] = useState('');
  const action = useAction();

  const start = () =>
    void action.run(async () => {
      setEnrollment(await api.post('/second-factor/totp', {}));
    });
  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const result = await api.post<{ recoveryCodes: string[] }>('/second-factor/totp/confirm', {
        code: value.replace(/\s/g, ''),
      });
      setCodes(result.recoveryCodes);
    });
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
        <ErrorAlert error={action.error} />
        <div>
          <button type="button" className="button button-primary" onClick={start}>
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
      <ErrorAlert error={codeError(action.error)} />
      <CodeField
        label="First code from the app"
        hint="Six digits: it confirms the app is set up right."
        numeric
        value={value}
        onChange={setValue}
      />
      <SubmitButton disabled={action.busy}>Turn on</SubmitButton>
    </form>
  );
}

/**
 * A person who must have a second factor and has none yet (every operator; a merchant's people
 * when its owners require one) sees only this page until one is set up.
 */
export function RequiredSetup({ why, onDone, onSignOut }: { why: string; onDone: () => void; onSignOut: () => void }) {
  usePageTitle('Set up a second factor');
  return (
    <AuthCard title="Set up a second factor" onSignOut={onSignOut}>
      <p>{why}</p>
      <TotpSetup onDone={onDone} />
    </AuthCard>
  );
}
