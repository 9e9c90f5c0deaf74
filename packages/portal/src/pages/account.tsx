import { startRegistration } from '@simplewebauthn/browser';
import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { ErrorAlert, Field, Loading, Notice, PageHeading, TableWrap, Time, useAsync } from '../components';
import { usePageTitle } from '../router';
import { useSession } from '../session';
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
    <section className="card" aria-labelledby="second-factor">
      <h2 id="second-factor">Second factor</h2>
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
    </section>
  );
}

/** The person's own account: their sessions (end any), their password. */
export function AccountPage() {
  usePageTitle('Your account');
  const session = useSession();
  const { data, error, loading, reload } = useAsync(() => api.get<SessionInfo[]>('/sessions'), []);
  const [current, setCurrent] = useState<SessionInfo[]>();
  const sessions = current ?? data;
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [passwords, setPasswords] = useState({ currentPassword: '', newPassword: '' });

  const end = async (id: string) => {
    setBusy(true);
    setActionError(undefined);
    setNotice('');
    try {
      setCurrent(await api.post<SessionInfo[]>(`/sessions/${encodeURIComponent(id)}/end`, {}));
      setNotice('The session was ended: that browser is signed out.');
    } catch (caught) {
      setActionError(caught);
      reload();
    } finally {
      setBusy(false);
    }
  };

  const change = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setActionError(undefined);
    setNotice('');
    try {
      const result = await api.post<{ endedSessions: number }>('/password', passwords);
      setPasswords({ currentPassword: '', newPassword: '' });
      setNotice(
        `Your password was changed. ${result.endedSessions} other ${result.endedSessions === 1 ? 'session was' : 'sessions were'} signed out.`,
      );
      setCurrent(undefined);
      reload();
    } catch (caught) {
      setActionError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <PageHeading>Your account</PageHeading>
      <p className="lead">
        Signed in as {session?.email}, with the {session?.role} role.
      </p>
      <Notice text={notice} />
      <ErrorAlert error={actionError} />
      <section className="card" aria-labelledby="sessions">
        <h2 id="sessions">Where you are signed in</h2>
        <ErrorAlert error={error} />
        {loading && !sessions ? <Loading what="sessions" /> : null}
        {sessions ? (
          <TableWrap label="Your sessions">
            <table>
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Address</th>
                  <th scope="col">Last used</th>
                  <th scope="col" className="hide-narrow">
                    Signed in
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
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
                        <button
                          type="button"
                          className="button button-danger button-small"
                          disabled={busy}
                          aria-label={`End the session of ${s.device} at ${s.ip ?? 'an unknown address'}`}
                          onClick={() => void end(s.id)}
                        >
                          End
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        ) : null}
      </section>
      <SecondFactorSection />
      <PasskeysSection />
      <section className="card" aria-labelledby="password">
        <h2 id="password">Change your password</h2>
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
          <div>
            <button type="submit" className="button button-primary" disabled={busy}>
              Change password
            </button>
          </div>
        </form>
      </section>
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
  const listed = useAsync(() => api.get<Passkey[]>('/passkeys'), []);
  const [current, setCurrent] = useState<Passkey[]>();
  const passkeys = current ?? listed.data;
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const act = async (work: () => Promise<Passkey[]>, done: string) => {
    setBusy(true);
    setError(undefined);
    setNotice('');
    try {
      setCurrent(await work());
      setNotice(done);
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  };
  const add = async (event: FormEvent) => {
    event.preventDefault();
    const chosen = name.trim();
    const added = await act(async () => {
      const optionsJSON = await api.post<Parameters<typeof startRegistration>[0]['optionsJSON']>(
        '/passkeys/options',
        {},
      );
      const response = await startRegistration({ optionsJSON });
      return api.post<Passkey[]>('/passkeys', { name: chosen, response });
    }, `Passkey “${chosen}” added: sign in with it alone, or use it after your password.`);
    if (added) setName('');
  };
  return (
    <section className="card" aria-labelledby="passkeys">
      <h2 id="passkeys">Passkeys</h2>
      <Notice text={notice} />
      <ErrorAlert error={error ?? listed.error} />
      {passkeys && passkeys.length > 0 ? (
        <TableWrap label="Your passkeys">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
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
                    <button
                      type="button"
                      className="button button-danger button-small"
                      disabled={busy}
                      aria-label={`Remove passkey ${p.name}`}
                      onClick={() =>
                        void act(
                          () => api.post<Passkey[]>(`/passkeys/${encodeURIComponent(p.id)}/remove`, {}),
                          `Passkey “${p.name}” removed; your other sessions were signed out.`,
                        )
                      }
                    >
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
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
        <div>
          <button type="submit" className="button button-primary" disabled={busy}>
            Add a passkey
          </button>
        </div>
      </form>
    </section>
  );
}
