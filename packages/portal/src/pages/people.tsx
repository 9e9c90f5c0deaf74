import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { ErrorAlert, Field, Loading, Notice, PageHeading, TableWrap, TeamTabs, Time, useAsync } from '../components';
import { usePageTitle } from '../router';
import { useSession } from '../session';
import type { Person, Role } from '../types';

const ROLES: readonly [Role, string][] = [
  ['owner', 'Owner: everything, people included'],
  ['developer', 'Developer: keys, webhook events, the sandbox helpers'],
  ['finance', 'Finance: cancel orders, exports'],
  ['viewer', 'Viewer: reads only'],
];

/** The merchant's people (owners only): invite by email, change roles, remove. */
export function PeoplePage() {
  usePageTitle('People');
  const session = useSession();
  const { data, error, loading, reload } = useAsync(() => api.get<Person[]>('/people'), []);
  const [current, setCurrent] = useState<Person[]>();
  const people = current ?? data;
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');

  const act = async (work: () => Promise<Person[]>, done: string) => {
    setBusy(true);
    setActionError(undefined);
    setNotice('');
    try {
      setCurrent(await work());
      setNotice(done);
      return true;
    } catch (caught) {
      setActionError(caught);
      reload();
      return false;
    } finally {
      setBusy(false);
    }
  };

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    const address = email.trim();
    let emailed = false;
    const ok = await act(async () => {
      const result = await api.post<{ emailed: boolean; people: Person[] }>('/people', { email: address, role });
      emailed = result.emailed;
      return result.people;
    }, '');
    if (ok) {
      setEmail('');
      setNotice(
        emailed
          ? `${address} is invited: the setup link was emailed to them (it works once, for 72 hours).`
          : `${address} is invited. No mail server is configured: the platform operator has the setup link in the server log.`,
      );
    }
  };

  return (
    <>
      <PageHeading>People</PageHeading>
      <TeamTabs current="people" />
      <p className="lead">
        Who can sign in to this merchant&apos;s portal, and what each may do. The last owner can be neither removed nor
        given another role.
      </p>
      <Notice text={notice} />
      <ErrorAlert error={actionError} />
      <section className="card" aria-labelledby="people-list">
        <h2 id="people-list">Teammates</h2>
        <ErrorAlert error={error} />
        {loading && !people ? <Loading what="people" /> : null}
        {people ? (
          <TableWrap label="Teammates">
            <table>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">
                    Invited
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {people.map((person) => (
                  <tr key={person.email}>
                    <td>
                      {person.email}
                      {person.email === session?.email ? <span className="muted small"> (you)</span> : null}
                    </td>
                    <td>
                      <label className="visually-hidden" htmlFor={`role-${person.email}`}>
                        Role of {person.email}
                      </label>
                      <select
                        id={`role-${person.email}`}
                        value={person.role}
                        disabled={busy}
                        onChange={(event) =>
                          void act(
                            () => api.post<Person[]>('/people/role', { email: person.email, role: event.target.value }),
                            `${person.email} is now ${event.target.value}.`,
                          )
                        }
                      >
                        {ROLES.map(([value]) => (
                          <option key={value} value={value}>
                            {value}
                          </option>
                        ))}
                      </select>
                    </td>
                    <td>{person.activated ? 'Active' : 'Invited'}</td>
                    <td className="hide-narrow">
                      <Time ms={person.createdAt} />
                    </td>
                    <td>
                      <button
                        type="button"
                        className="button button-danger button-small"
                        disabled={busy}
                        aria-label={`Remove ${person.email}`}
                        onClick={() =>
                          void act(
                            () => api.post<Person[]>('/people/remove', { email: person.email }),
                            `${person.email} was removed and signed out.`,
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
        ) : null}
      </section>
      <RequireSecondFactor />
      <section className="card" aria-labelledby="invite">
        <h2 id="invite">Invite someone</h2>
        <form className="stack" onSubmit={(event) => void invite(event)}>
          <Field label="Email" hint="They receive a one-time link to choose a password (valid 72 hours).">
            {(props) => (
              <input
                {...props}
                type="email"
                name="email"
                required
                autoComplete="off"
                value={email}
                onChange={(event) => setEmail(event.target.value)}
              />
            )}
          </Field>
          <Field label="Role">
            {(props) => (
              <select {...props} name="role" value={role} onChange={(event) => setRole(event.target.value as Role)}>
                {ROLES.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <div>
            <button type="submit" className="button button-primary" disabled={busy}>
              Send invitation
            </button>
          </div>
        </form>
      </section>
    </>
  );
}

/** Owners require a second factor of everyone of the merchant (or stop requiring it). */
function RequireSecondFactor() {
  const security = useAsync(() => api.get<{ requireSecondFactor: boolean }>('/security'), []);
  const [current, setCurrent] = useState<boolean>();
  const [error, setError] = useState<unknown>();
  const required = current ?? security.data?.requireSecondFactor;
  const change = async (value: boolean) => {
    setError(undefined);
    try {
      setCurrent(
        (await api.post<{ requireSecondFactor: boolean }>('/security', { requireSecondFactor: value }))
          .requireSecondFactor,
      );
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section className="card" aria-labelledby="security">
      <h2 id="security">Security</h2>
      <ErrorAlert error={error ?? security.error} />
      {required === undefined ? null : (
        <label className="checkbox">
          <input type="checkbox" checked={required} onChange={(event) => void change(event.target.checked)} /> Require a
          second factor (an authenticator app) of everyone: people without one must set it up before anything else
        </label>
      )}
    </section>
  );
}
