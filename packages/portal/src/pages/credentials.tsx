import { type FormEvent, useState } from 'react';
import { useEditable } from '../action';
import { api } from '../api';
import {
  ActionStatus,
  Card,
  CopyableValue,
  EnvironmentBadge,
  ErrorAlert,
  Field,
  Loading,
  PageHeading,
  RowButton,
  StatusBadge,
  SubmitButton,
  Time,
} from '../components';
import { usePageTitle } from '../router';
import { useCan } from '../session';
import { ACTIONS_COLUMN, DataTable } from '../table';
import type { Credentials } from '../types';

export function CredentialsPage() {
  usePageTitle('Credentials');
  const keys = useEditable(() => api.get<Credentials>('/credentials'), { reloadOnError: true });
  const credentials = keys.data;
  const [newKey, setNewKey] = useState('');
  const canManage = useCan('keys');

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (await keys.write(() => api.post<Credentials>('/keys', { publicKey: newKey.trim() }), 'Public key added.')) {
      setNewKey('');
    }
  };
  const retire = (key: string) =>
    void keys.write(
      () => api.post<Credentials>('/keys/retire', { key }),
      'Public key retired: it no longer signs requests.',
    );

  if (!credentials) {
    return (
      <>
        <PageHeading>Credentials</PageHeading>
        {keys.loading ? <Loading what="credentials" /> : <ErrorAlert error={keys.error} />}
      </>
    );
  }
  const active = credentials.publicKeys.filter((k) => k.status === 'active');
  const full = active.length >= credentials.maxActiveKeys;
  return (
    <>
      <PageHeading>Credentials</PageHeading>
      <p className="lead">
        Everything you configure in your integration, for the <EnvironmentBadge environment={credentials.environment} />{' '}
        environment. Keys of one environment never work in the other.
      </p>
      <ActionStatus action={keys.action} />

      <Card id="access-key" title="Access key">
        <p className="hint">
          Sent in the <code>Merchant-Access-Key</code> header of every request. It identifies you; it is not a secret.
        </p>
        <CopyableValue value={credentials.accessKey} label="access key" />
      </Card>

      <Card id="merchant-keys" title="Your Ed25519 public keys">
        <p className="hint">
          The server verifies your request signatures with these. Keep the private key yourself: it is never uploaded.
          Up to {credentials.maxActiveKeys} keys are active at once, so you can rotate: add the new key, switch your
          signer to it, then retire the old one.
        </p>
        <DataTable
          label="Your public keys"
          columns={['Public key (base64)', 'Status', 'Added', 'Retired', ACTIONS_COLUMN]}
        >
          {credentials.publicKeys.map((key) => (
            <tr key={key.id}>
              <td>
                <code className="mono">{key.publicKey}</code>
              </td>
              <td>
                <StatusBadge status={key.status} />
              </td>
              <td>
                <Time ms={key.createdAt} />
              </td>
              <td>
                <Time ms={key.retiredAt} />
              </td>
              <td>
                {key.status === 'active' && canManage ? (
                  <RowButton
                    danger
                    label={`Retire key ${key.publicKey.slice(0, 12)}…`}
                    disabled={keys.action.busy || active.length < 2}
                    onClick={() => retire(key.id)}
                    title={active.length < 2 ? 'The last active key cannot be retired' : undefined}
                  >
                    Retire
                  </RowButton>
                ) : null}
              </td>
            </tr>
          ))}
        </DataTable>
        {canManage ? null : (
          <p className="hint">Your role can read the keys; the owner or developer role adds and retires them.</p>
        )}
        {canManage ? (
          <form className="stack" onSubmit={(event) => void upload(event)}>
            <Field
              label="Add a public key"
              hint="Base64 of the raw 32-byte Ed25519 public key, or a PEM public key (-----BEGIN PUBLIC KEY-----)."
            >
              {(props) => (
                <textarea
                  {...props}
                  name="publicKey"
                  rows={3}
                  required
                  spellCheck={false}
                  value={newKey}
                  onChange={(event) => setNewKey(event.target.value)}
                />
              )}
            </Field>
            <SubmitButton
              disabled={keys.action.busy || full}
              note={
                full ? (
                  <span className="hint inline-hint">
                    {credentials.maxActiveKeys} keys are active: retire one first.
                  </span>
                ) : null
              }
            >
              Upload key
            </SubmitButton>
          </form>
        ) : null}
      </Card>

      <Card id="body-key" title="Platform body key (X25519)">
        <p className="hint">
          Seal every POST body to this public key and put its keyId in the envelope&apos;s <code>keyId</code>.
        </p>
        <h3 className="label">keyId</h3>
        <CopyableValue value={credentials.bodyKey.keyId} label="body keyId" />
        <h3 className="label">Public key (base64)</h3>
        <CopyableValue value={credentials.bodyKey.publicKey} label="body public key" />
      </Card>

      <Card id="webhook-keys" title="Platform webhook keys (Ed25519)">
        <p className="hint">
          Webhooks are signed with one of these; the <code>keyid</code> in their Signature-Input says which. Accept
          every key listed here.
        </p>
        <ul className="key-list">
          {credentials.webhookKeys.map((key) => (
            <li key={key.keyid}>
              <div className="key-head">
                <StatusBadge status={key.status} /> <span className="muted">since</span> <Time ms={key.createdAt} />
              </div>
              <h3 className="label">keyid</h3>
              <CopyableValue value={key.keyid} label={`webhook keyid ${key.keyid}`} />
              <h3 className="label">Public key (base64)</h3>
              <CopyableValue value={key.publicKey} label={`webhook public key ${key.keyid}`} />
            </li>
          ))}
        </ul>
      </Card>
    </>
  );
}
