/**
 * Operators (admins only): invite one (the setup link shown once, or emailed), change a role,
 * remove one. The API keeps the last admin: its refusal shows here as it comes.
 */
import { type FormEvent, useState } from 'react';
import { useEditable } from '../../action';
import {
  ActionStatus,
  Card,
  CopyableValue,
  Field,
  LoadStatus,
  PageHeading,
  RowButton,
  SubmitButton,
} from '../../components';
import { ACTIONS_COLUMN, DataTable } from '../../table';
import { api } from '../../api';
import { usePageTitle } from '../../router';
import { useSession } from '../session';
import { Time } from '../time';
import { OPERATOR_ROLES, type Person } from '../types';

const ROLE_WORDS: Readonly<Record<string, string>> = {
  admin: 'everything: operators, merchants, platform keys',
  support: 'reads; resends and replays events; asks a channel again',
  finance: 'reads; adjustments, fee plans, bank files, reconciliation',
  auditor: 'reads, the audit trail included',
};

export function OperatorsPage() {
  usePageTitle('Operators');
  const me = useSession();
  const list = useEditable(async () => (await api.get<{ operators: Person[] }>('/operators')).operators, {
    reloadOnError: true,
  });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('support');
  const [link, setLink] = useState<string>();

  const invite = async (event: FormEvent) => {
    event.preventDefault();
    const address = email.trim();
    await list.write(async () => {
      const answer = await api.post<{ operators: Person[]; setupUrl?: string; emailed: boolean }>('/operators', {
        email: address,
        role,
      });
      setLink(answer.setupUrl);
      setEmail('');
      return answer.operators;
    }, `${address} is invited as ${role}. ${'The setup link works once, for 72 hours.'}`);
  };
  const setRoleOf = (person: Person, next: string) =>
    void list.write(
      async () =>
        (await api.post<{ operators: Person[] }>('/operators/role', { email: person.email, role: next })).operators,
      `${person.email} is now ${next}.`,
    );
  const remove = (person: Person) =>
    void list.write(
      async () => (await api.post<{ operators: Person[] }>('/operators/remove', { email: person.email })).operators,
      `${person.email} was removed; their sessions are ended.`,
    );

  return (
    <>
      <PageHeading>Operators</PageHeading>
      <ActionStatus action={list.action} />
      {link ? (
        <Card id="invitation" title="The setup link">
          <p>Send it to the person invited, by a channel you trust. It is shown only now.</p>
          <CopyableValue value={link} label="setup link" />
        </Card>
      ) : null}
      <Card id="invite" title="Invite an operator">
        <form className="inline-form" onSubmit={(event) => void invite(event)}>
          <Field label="Email">
            {(props) => (
              <input
                {...props}
                type="email"
                required
                maxLength={254}
                value={email}
                onChange={(event) => setEmail(event.target.value)}
              />
            )}
          </Field>
          <Field label="Role">
            {(props) => (
              <select {...props} value={role} onChange={(event) => setRole(event.target.value)}>
                {OPERATOR_ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <SubmitButton disabled={list.action.busy}>Invite</SubmitButton>
        </form>
        <ul className="small muted">
          {OPERATOR_ROLES.map((r) => (
            <li key={r}>
              <strong>{r}</strong>: {ROLE_WORDS[r]}
            </li>
          ))}
        </ul>
      </Card>
      <LoadStatus state={list} what="operators" />
      {list.data ? (
        <DataTable
          label="Operators"
          columns={[
            'Email',
            'Role',
            { heading: 'State', className: 'hide-narrow' },
            { heading: 'Since', className: 'hide-narrow' },
            ACTIONS_COLUMN,
          ]}
        >
          {list.data.map((p) => (
            <tr key={p.email}>
              <td>
                {p.email}
                {p.email === me?.email ? <span className="muted small"> (you)</span> : null}
              </td>
              <td>
                <label className="visually-hidden" htmlFor={`role-${p.email}`}>
                  Role of {p.email}
                </label>
                <select
                  id={`role-${p.email}`}
                  className="inline-select"
                  value={p.role}
                  disabled={list.action.busy}
                  onChange={(event) => setRoleOf(p, event.target.value)}
                >
                  {OPERATOR_ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td className="hide-narrow">
                {p.activated ? (
                  'active'
                ) : (
                  <>
                    invited
                    {p.invitationExpiresAt ? (
                      <div className="small muted">
                        until <Time ms={p.invitationExpiresAt} />
                      </div>
                    ) : null}
                  </>
                )}
              </td>
              <td className="hide-narrow">
                <Time ms={p.createdAt} />
              </td>
              <td>
                <RowButton danger label={`Remove ${p.email}`} disabled={list.action.busy} onClick={() => remove(p)}>
                  Remove
                </RowButton>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </>
  );
}
