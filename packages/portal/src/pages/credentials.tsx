import { type FormEvent, useState } from 'react';
import { api } from '../api';
import {
  CopyableValue,
  Notice,
  EnvironmentBadge,
  ErrorAlert,
  Field,
  Loading,
  PageHeading,
  StatusBadge,
  TableWrap,
  Time,
  useAsync,
} from '../components';
import { usePageTitle } from '../router';
import { useCan } from '../session';
import type { Credentials } from '../types';

export function CredentialsPage() {
  usePageTitle('Credentials');
  const { data, error, loading, reload } = useAsync(() => api.get<Credentials>('/credentials'), []);
  const [current, setCurrent] = useState<Credentials>();
  const credentials = current ?? data;
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const [newKey, setNewKey] = useState('');
  const [busy, setBusy] = useState(false);
  const canManage = useCan('keys');

  const act = async (work: () => Promise<Credentials>, done: string) => {
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

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (await act(() => api.post<Credentials>('/keys', { publicKey: newKey.trim() }), 'Public key added.')) {
      setNewKey('');
    }
  };
  const retire = (key: string) =>
    void act(() => api.post<Credentials>('/keys/retire', { key }), 'Public key retired: it no longer signs requests.');

  if (!credentials) {
    return (
      <>
        <PageHeading>Credentials</PageHeading>
        {loading ? <Loading what="credentials" /> : <ErrorAlert error={error} />}
      </>
    );
  }
  const active = credentials.publicKeys.filter((k) => k.status === 'active');
  return (
    <>
      <PageHeading>Credentials</PageHeading>
      <p className="lead">
        Everything you configure in your integration, for the <EnvironmentBadge environment={credentials.environment} />{' '}
        environment. Keys of one environment never work in the other.
      </p>
      <Notice text={notice} />
      <ErrorAlert error={actionError} />

      <section className="card" aria-labelledby="access-key">
        <h2 id="access-key">Access key</h2>
        <p className="hint">
          Sent in the <code>Merchant-Access-Key</code> header of every request. It identifies you; it is not a secret.
        </p>
        <CopyableValue value={credentials.accessKey} label="access key" />
      </section>

      <section className="card" aria-labelledby="merchant-keys">
        <h2 id="merchant-keys">Your Ed25519 public keys</h2>
        <p className="hint">
          The server verifies your request signatures with these. Keep the private key yourself: it is never uploaded.
          Up to {credentials.maxActiveKeys} keys are active at once, so you can rotate: add the new key, switch your
          signer to it, then retire the old one.
        </p>
        <TableWrap label="Your public keys">
          <table>
            <thead>
              <tr>
                <th scope="col">Public key (base64)</th>
                <th scope="col">Status</th>
                <th scope="col">Added</th>
                <th scope="col">Retired</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
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
                      <button
                        type="button"
                        className="button button-danger button-small"
                        disabled={busy || active.length < 2}
                        onClick={() => retire(key.id)}
                        aria-label={`Retire key ${key.publicKey.slice(0, 12)}…`}
                        title={active.length < 2 ? 'The last active key cannot be retired' : undefined}
                      >
                        Retire
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
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
            <div>
              <button
                type="submit"
                className="button button-primary"
                disabled={busy || active.length >= credentials.maxActiveKeys}
              >
                Upload key
              </button>
              {active.length >= credentials.maxActiveKeys ? (
                <span className="hint inline-hint">{credentials.maxActiveKeys} keys are active: retire one first.</span>
              ) : null}
            </div>
          </form>
        ) : null}
      </section>

      <section className="card" aria-labelledby="body-key">
        <h2 id="body-key">Platform body key (X25519)</h2>
        <p className="hint">
          Seal every POST body to this public key and put its keyId in the envelope&apos;s <code>keyId</code>.
        </p>
        <h3 className="label">keyId</h3>
        <CopyableValue value={credentials.bodyKey.keyId} label="body keyId" />
        <h3 className="label">Public key (base64)</h3>
        <CopyableValue value={credentials.bodyKey.publicKey} label="body public key" />
      </section>

      <section className="card" aria-labelledby="webhook-keys">
        <h2 id="webhook-keys">Platform webhook keys (Ed25519)</h2>
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
      </section>
    </>
  );
}
