import { type FormEvent, useState } from 'react';
import { useAction, useEditable } from '../action';
import { api } from '../api';
import {
  ActionStatus,
  Card,
  ErrorAlert,
  Field,
  LoadStatus,
  PageHeading,
  RowButton,
  SubmitButton,
  TeamTabs,
  Time,
  useAsync,
} from '../components';
import { usePageTitle } from '../router';
import { useSession } from '../session';
import { ACTIONS_COLUMN, DataTable } from '../table';
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
  const team = useEditable(() => api.get<Person[]>('/people'), { reloadOnError: true });
  const people = team.data;
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    const address = email.trim();
    // The answer carries whether the invitation was emailed, besides the new list.
    const invited = await team.action.run(
      async () => {
        const result = await api.post<{ emailed: boolean; people: Person[] }>('/people', { email: address, role });
        team.replace(result.people);
        return result.emailed
          ? `${address} is invited: the setup link was emailed to them (it works once, for 72 hours).`
          : `${address} is invited. No mail server is configured: the platform operator has the setup link in the server log.`;
      },
      { onError: team.reload },
    );
    if (invited) setEmail('');
  };

  const changeRole = (address: string, newRole: string) =>
    void team.write(
      () => api.post<Person[]>('/people/role', { email: address, role: newRole }),
      `${address} is now ${newRole}.`,
    );
  const remove = (address: string) =>
    void team.write(
      () => api.post<Person[]>('/people/remove', { email: address }),
      `${address} was removed and signed out.`,
    );

  return (
    <>
      <PageHeading>People</PageHeading>
      <TeamTabs current="people" />
      <p className="lead">
        Who can sign in to this merchant&apos;s portal, and what each may do. The last owner can be neither removed nor
        given another role.
      </p>
      <ActionStatus action={team.action} />
      <Card id="people-list" title="Teammates">
        <LoadStatus state={team} what="people" />
        {people ? (
          <DataTable
            label="Teammates"
            columns={['Email', 'Role', 'Status', { heading: 'Invited', className: 'hide-narrow' }, ACTIONS_COLUMN]}
          >
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
                    disabled={team.action.busy}
                    onChange={(event) => changeRole(person.email, event.target.value)}
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
                  <RowButton
                    danger
                    label={`Remove ${person.email}`}
                    disabled={team.action.busy}
                    onClick={() => remove(person.email)}
                  >
                    Remove
                  </RowButton>
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </Card>
      <RequireSecondFactor />
      <Card id="invite" title="Invite someone">
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
          <SubmitButton disabled={team.action.busy}>Send invitation</SubmitButton>
        </form>
      </Card>
    </>
  );
}

/** Owners require a second factor of everyone of the merchant (or stop requiring it). */
function RequireSecondFactor() {
  const security = useAsync(() => api.get<{ requireSecondFactor: boolean }>('/security'), []);
  const [current, setCurrent] = useState<boolean>();
  const action = useAction();
  const required = current ?? security.data?.requireSecondFactor;
  const change = (value: boolean) =>
    void action.run(async () => {
      const answer = await api.post<{ requireSecondFactor: boolean }>('/security', { requireSecondFactor: value });
      setCurrent(answer.requireSecondFactor);
    });
  return (
    <Card id="security" title="Security">
      <ErrorAlert error={action.error ?? security.error} />
      {required === undefined ? null : (
        <label className="checkbox">
          <input type="checkbox" checked={required} onChange={(event) => change(event.target.checked)} /> Require a
          second factor (an authenticator app) of everyone: people without one must set it up before anything else
        </label>
      )}
    </Card>
  );
}
