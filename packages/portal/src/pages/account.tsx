import { startRegistration } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { useEditable } from '../action';
import { api } from '../api';
import {
  ActionStatus,
  Card,
  ErrorAlert,
  Field,
  LoadStatus,
  Notice,
  PageHeading,
  RowButton,
  SubmitButton,
  Time,
  useAsync,
} from '../components';
import { usePageTitle } from '../router';
import { useSession } from '../session';
import { ACTIONS_COLUMN, DataTable } from '../table';
import type { SessionInfo } from '../types';
import { CodeForm, TotpSetup } from './second-factor';

/** The person's second factor: set it up, see the recovery codes left, turn it off. */
function SecondFactorSection() {
  const status = useAsync(
    () => api.get<{ enabled: boolean; totp: boolean; recoveryCodesLeft: number; required: boolean }>('/second-factor'),
    [],
  );
  const [notice, setNotice] = useState('');
  return (
    <Card id="second-factor" title="Second factor">
      <Notice text={notice} />
      <ErrorAlert error={status.error} />
      {status.data?.totp ? (
        <>
          <p>
            An authenticator app is set up: signing in asks for its code, and so do key, people and security changes
            when your last check is older than 5 minutes. {status.data.recoveryCodesLeft} recovery codes are left.
          </p>
          <h3>Turn it off</h3>
          <p className="hint">Every other session of yours is signed out.</p>
          <CodeForm
            submitLabel="Turn off the second factor"
            onCode={async (body) => {
              await api.post('/second-factor/remove', body);
              setNotice('The second factor is off; your other sessions were signed out.');
              status.reload();
            }}
          />
        </>
      ) : status.data ? (
        <>
          <p>
            {status.data.required
              ? 'Your merchant requires a second factor.'
              : 'Add a code from an authenticator app to your password, so a stolen password is not enough.'}
          </p>
          <TotpSetup onDone={() => status.reload()} />
        </>
      ) : null}
    </Card>
  );
}

/** The person's own account: their sessions (end any), their password. */
export function AccountPage() {
  usePageTitle('Your account');
  const session = useSession();
  const signIns = useEditable(() => api.get<SessionInfo[]>('/sessions'), { reloadOnError: true });
  const sessions = signIns.data;
  const [passwords, setPasswords] = useState({ currentPassword: '', newPassword: '' });

  const end = (id: string) =>
    void signIns.write(
      () => api.post<SessionInfo[]>(`/sessions/${encodeURIComponent(id)}/end`, {}),
      'The session was ended: that browser is signed out.',
    );

  const change = async (event: FormEvent) => {
    event.preventDefault();
    await signIns.action.run(async () => {
      const result = await api.post<{ endedSessions: number }>('/password', passwords);
      setPasswords({ currentPassword: '', newPassword: '' });
      // The other sessions were ended: show the list as the server has it now.
      signIns.replace(undefined);
      signIns.reload();
      return `Your password was changed. ${result.endedSessions} other ${result.endedSessions === 1 ? 'session was' : 'sessions were'} signed out.`;
    });
  };

  return (
    <>
      <PageHeading>Your account</PageHeading>
      <p className="lead">
        Signed in as {session?.email}, with the {session?.role} role.
      </p>
      <ActionStatus action={signIns.action} />
      <Card id="sessions" title="Where you are signed in">
        <LoadStatus state={signIns} what="sessions" />
        {sessions ? (
          <DataTable
            label="Your sessions"
            columns={[
              'Device',
              'Address',
              'Last used',
              { heading: 'Signed in', className: 'hide-narrow' },
              ACTIONS_COLUMN,
            ]}
          >
            {sessions.map((s) => (
              <tr key={s.id}>
                <td title={s.userAgent ?? undefined}>
                  {s.device}
                  {s.current ? <span className="muted small"> (this browser)</span> : null}
                </td>
                <td className="mono">{s.ip ?? '—'}</td>
                <td>
                  <Time ms={s.lastSeenAt} />
                </td>
                <td className="hide-narrow">
                  <Time ms={s.createdAt} />
                </td>
                <td>
                  {s.current ? null : (
                    <RowButton
                      danger
                      label={`End the session of ${s.device} at ${s.ip ?? 'an unknown address'}`}
                      disabled={signIns.action.busy}
                      onClick={() => end(s.id)}
                    >
                      End
                    </RowButton>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </Card>
      <SecondFactorSection />
      <PasskeysSection />
      <Card id="password" title="Change your password">
        <form className="stack" onSubmit={(event) => void change(event)}>
          <Field label="Current password">
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="current-password"
                required
                value={passwords.currentPassword}
                onChange={(event) => setPasswords({ ...passwords, currentPassword: event.target.value })}
              />
            )}
          </Field>
          <Field label="New password" hint="At least 12 characters. Every other session of yours is signed out.">
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="new-password"
                required
                minLength={12}
                value={passwords.newPassword}
                onChange={(event) => setPasswords({ ...passwords, newPassword: event.target.value })}
              />
            )}
          </Field>
          <SubmitButton disabled={signIns.action.busy}>Change password</SubmitButton>
        </form>
      </Card>
    </>
  );
}

interface Passkey {
  readonly id: string;
  readonly name: string;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
}

/** The person's passkeys: add one (this device's, or a security key), remove any. */
function PasskeysSection() {
  const keys = useEditable(() => api.get<Passkey[]>('/passkeys'), { reloadOnError: false });
  const passkeys = keys.data;
  const [name, setName] = useState('');
  const add = async (event: FormEvent) => {
    event.preventDefault();
    const chosen = name.trim();
    const added = await keys.write(async () => {
      const optionsJSON = await api.post<Parameters<typeof startRegistration>[0]['optionsJSON']>(
        '/passkeys/options',
        {},
      );
      const response = await startRegistration({ optionsJSON });
      return api.post<Passkey[]>('/passkeys', { name: chosen, response });
    }, `Passkey “${chosen}” added: sign in with it alone, or use it after your password.`);
    if (added) setName('');
  };
  const remove = (passkey: Passkey) =>
    void keys.write(
      () => api.post<Passkey[]>(`/passkeys/${encodeURIComponent(passkey.id)}/remove`, {}),
      `Passkey “${passkey.name}” removed; your other sessions were signed out.`,
    );
  return (
    <Card id="passkeys" title="Passkeys">
      <ActionStatus action={keys.action} loadError={keys.error} />
      {passkeys && passkeys.length > 0 ? (
        <DataTable label="Your passkeys" columns={['Name', 'Added', 'Last used', ACTIONS_COLUMN]}>
          {passkeys.map((p) => (
            <tr key={p.id}>
              <td>{p.name}</td>
              <td>
                <Time ms={p.createdAt} />
              </td>
              <td>
                <Time ms={p.lastUsedAt} />
              </td>
              <td>
                <RowButton
                  danger
                  label={`Remove passkey ${p.name}`}
                  disabled={keys.action.busy}
                  onClick={() => remove(p)}
                >
                  Remove
                </RowButton>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : passkeys ? (
        <p>
          No passkey yet. A passkey signs you in with your device&apos;s lock (fingerprint, face, PIN): nothing to type.
        </p>
      ) : null}
      <form className="stack" onSubmit={(event) => void add(event)}>
        <Field label="Passkey name" hint="To tell your passkeys apart, for example “Work laptop”.">
          {(props) => (
            <input
              {...props}
              type="text"
              name="passkeyName"
              required
              maxLength={60}
              value={name}
              onChange={(event) => setName(event.target.value)}
            />
          )}
        </Field>
        <SubmitButton disabled={keys.action.busy}>Add a passkey</SubmitButton>
      </form>
    </Card>
  );
}
