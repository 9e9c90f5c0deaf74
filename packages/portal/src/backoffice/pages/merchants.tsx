/**
 * Merchants: the list (each one's volume of the last 30 days and its balances), creating one, and
 * one merchant's page: its people, keys, webhook delivery health, channels used, balances and
 * fee plan; disable and enable, invite its first owner, propose a change of its fee plan.
 */
import { type FormEvent, useState } from 'react';
import { useAction } from '../../action';
import {
  ActionStatus,
  Card,
  CopyableValue,
  Details,
  Field,
  LoadStatus,
  PageHeading,
  StatusBadge,
  SubmitButton,
  useAsync,
} from '../../components';
import { CURRENCIES, formatMoney } from '../../format';
import { LinkedRow, Pager } from '../../lists';
import { DataTable } from '../../table';
import { api } from '../../api';
import { Link, usePageTitle } from '../../router';
import { useCan } from '../session';
import { Time } from '../time';
import type { BalanceView, EventView, FeeChange, FeePlan, MerchantItem, Person, Volume } from '../types';
import { FeeChangesTable } from './money';

const merchantLink = (accessKey: string) => `/merchants/${encodeURIComponent(accessKey)}`;

function Volumes({ volumes }: { volumes: readonly Volume[] }) {
  if (volumes.length === 0) return <span className="muted">none</span>;
  return (
    <>
      {volumes.map((v) => (
        <div key={v.currency}>
          {formatMoney(v.amount, v.currency)} <span className="muted small">({v.count})</span>
        </div>
      ))}
    </>
  );
}

function Balances({ balances }: { balances: readonly BalanceView[] }) {
  if (balances.length === 0) return <span className="muted">none</span>;
  return (
    <>
      {balances.map((b) => (
        <div key={b.currency}>{formatMoney(b.available, b.currency)}</div>
      ))}
    </>
  );
}

export function MerchantsPage() {
  usePageTitle('Merchants');
  const [stack, setStack] = useState<string[]>([]);
  const cursor = stack.at(-1);
  const list = useAsync(
    () =>
      api.get<{ items: MerchantItem[]; nextCursor?: string }>(
        `/merchants${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    [cursor],
  );
  const canManage = useCan('merchants');
  return (
    <>
      <PageHeading>Merchants</PageHeading>
      <p className="lead">Volume is what succeeded in the last 30 days; balances are available now.</p>
      {canManage ? <CreateMerchant onCreated={list.reload} /> : null}
      <LoadStatus state={list} what="merchants" />
      {list.data ? (
        <>
          <DataTable
            label="Merchants"
            busy={list.loading}
            columns={[
              'Merchant',
              'State',
              { heading: 'Payments (30 days)', className: 'num' },
              { heading: 'Payouts (30 days)', className: 'num hide-narrow' },
              { heading: 'Available', className: 'num' },
              { heading: 'Created', className: 'hide-narrow' },
            ]}
          >
            {list.data.items.map((m) => (
              <LinkedRow key={m.accessKey} to={merchantLink(m.accessKey)}>
                <td>
                  <Link to={merchantLink(m.accessKey)}>{m.name}</Link>
                  <div className="muted small mono">{m.accessKey}</div>
                </td>
                <td>
                  <StatusBadge status={m.disabled ? 'disabled' : 'active'} />
                </td>
                <td className="num">
                  <Volumes volumes={m.volume.payments} />
                </td>
                <td className="num hide-narrow">
                  <Volumes volumes={m.volume.payouts} />
                </td>
                <td className="num">
                  <Balances balances={m.balances} />
                </td>
                <td className="hide-narrow">
                  <Time ms={m.createdAt} />
                </td>
              </LinkedRow>
            ))}
          </DataTable>
          <Pager
            pageNumber={stack.length + 1}
            nextCursor={list.data.nextCursor}
            onNext={(next) => setStack([...stack, next])}
            onPrevious={() => setStack(stack.slice(0, -1))}
          />
        </>
      ) : null}
    </>
  );
}

function CreateMerchant({ onCreated }: { onCreated: () => void }) {
  const action = useAction();
  const [created, setCreated] = useState<{ accessKey: string; bodyKey: { keyId: string; publicKey: string } }>();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const target = event.currentTarget;
    await action.run(async () => {
      const answer = await api.post<{ accessKey: string; bodyKey: { keyId: string; publicKey: string } }>(
        '/merchants',
        { name: String(form.get('name') ?? '').trim(), publicKey: String(form.get('publicKey') ?? '').trim() },
      );
      setCreated(answer);
      target.reset();
      onCreated();
      return `Merchant created: ${answer.accessKey}. Invite its first owner from its page.`;
    });
  };
  return (
    <details className="card">
      <summary>Create a merchant</summary>
      <ActionStatus action={action} />
      {created ? (
        <Details
          items={[
            ['Access key', <CopyableValue value={created.accessKey} label="access key" />],
            ['Platform body key', <span className="mono">{created.bodyKey.keyId}</span>],
            ['Its page', <Link to={merchantLink(created.accessKey)}>Open {created.accessKey}</Link>],
          ]}
        />
      ) : null}
      <form className="stack" onSubmit={(event) => void submit(event)}>
        <Field label="Name">{(props) => <input {...props} name="name" required maxLength={200} />}</Field>
        <Field
          label="Its public key"
          hint="The merchant's Ed25519 public key (PEM or base64), from `paygate keys generate`."
        >
          {(props) => <textarea {...props} name="publicKey" required rows={3} maxLength={1000} />}
        </Field>
        <SubmitButton disabled={action.busy}>Create merchant</SubmitButton>
      </form>
    </details>
  );
}

interface MerchantDetail {
  accessKey: string;
  name: string;
  environment?: string;
  disabled: boolean;
  people: Person[];
  keys: { id: string; publicKey: string; status: string; createdAt: number; retiredAt: number | null }[];
  webhookHealth: {
    since: number;
    delivered: number;
    failed: number;
    pending: number;
    failureRate: number;
    oldestUndelivered: EventView | null;
  };
  balances: BalanceView[];
  channels: {
    payments: { channel: string; orders: number; lastAt: number }[];
    payouts: { channel: string; orders: number; lastAt: number }[];
  };
  volume: { from: number; to: number; payments: Volume[]; payouts: Volume[] };
  fees: FeePlan;
}

interface Rates {
  overrides: FeePlan;
  changeId: string | null;
  updatedAt: number | null;
  rates: {
    currency: string;
    payments: { method: string; feePercent: string; feeFixed: string }[];
    payout: { feePercent: string; feeFixed: string };
  }[];
  changes: FeeChange[];
}

export function MerchantPage({ accessKey }: { accessKey: string }) {
  const path = `/merchants/${encodeURIComponent(accessKey)}`;
  const merchant = useAsync(() => api.get<MerchantDetail>(path), [accessKey]);
  const fees = useAsync(() => api.get<Rates>(`${path}/fees`), [accessKey]);
  const action = useAction();
  const canManage = useCan('merchants');
  const m = merchant.data;
  usePageTitle(m ? m.name : accessKey);

  const toggle = () =>
    void action.run(async () => {
      if (!m) return;
      await api.post(`${path}/${m.disabled ? 'enable' : 'disable'}`, {});
      merchant.reload();
      return m.disabled
        ? 'The merchant is enabled: its API answers again.'
        : 'The merchant is disabled: its API refuses every request.';
    });

  return (
    <>
      <p className="crumbs">
        <Link to="/merchants">← Merchants</Link>
      </p>
      <PageHeading>{m ? m.name : accessKey}</PageHeading>
      <LoadStatus state={merchant} what="the merchant" />
      <ActionStatus action={action} />
      {m ? (
        <>
          <div className="toolbar">
            <StatusBadge status={m.disabled ? 'disabled' : 'active'} />
            <span className="mono">{m.accessKey}</span>
            {canManage ? (
              <button
                type="button"
                className={m.disabled ? 'button' : 'button button-danger'}
                disabled={action.busy}
                onClick={toggle}
              >
                {m.disabled ? 'Enable the merchant' : 'Disable the merchant'}
              </button>
            ) : null}
          </div>
          <div className="grid-2">
            <Card id="merchant-money" title="Balances and volume">
              <Details
                items={[
                  ['Available', <Balances balances={m.balances} />],
                  ['Payments, 30 days', <Volumes volumes={m.volume.payments} />],
                  ['Payouts, 30 days', <Volumes volumes={m.volume.payouts} />],
                ]}
              />
              <p>
                <Link to={`/search?merchant=${encodeURIComponent(m.accessKey)}`}>Its orders</Link>
              </p>
            </Card>
            <WebhookHealth health={m.webhookHealth} accessKey={m.accessKey} />
          </div>
          <People people={m.people} accessKey={m.accessKey} canInvite={canManage} onInvited={merchant.reload} />
          <div className="grid-2">
            <Card id="merchant-keys" title="Public keys">
              <DataTable label="Its public keys" columns={['Key', 'Status', 'Added']}>
                {m.keys.map((key) => (
                  <tr key={key.id}>
                    <td className="mono break">{key.publicKey.slice(0, 24)}…</td>
                    <td>
                      <StatusBadge status={key.status} />
                    </td>
                    <td>
                      <Time ms={key.createdAt} />
                    </td>
                  </tr>
                ))}
              </DataTable>
            </Card>
            <Card id="merchant-channels" title="Channels used">
              {m.channels.payments.length + m.channels.payouts.length === 0 ? (
                <p className="muted">No order has gone through a channel yet (the sandbox serves it).</p>
              ) : (
                <DataTable
                  label="Channels it used"
                  columns={['Channel', 'For', { heading: 'Orders', className: 'num' }, 'Last']}
                >
                  {[
                    ...m.channels.payments.map((c) => ({ ...c, kind: 'payments' })),
                    ...m.channels.payouts.map((c) => ({ ...c, kind: 'payouts' })),
                  ].map((c) => (
                    <tr key={`${c.kind}-${c.channel}`}>
                      <td>{c.channel}</td>
                      <td>{c.kind}</td>
                      <td className="num">{c.orders}</td>
                      <td>
                        <Time ms={c.lastAt} />
                      </td>
                    </tr>
                  ))}
                </DataTable>
              )}
            </Card>
          </div>
          <FeePlanCard accessKey={m.accessKey} fees={fees} />
        </>
      ) : null}
    </>
  );
}

function WebhookHealth({ health, accessKey }: { health: MerchantDetail['webhookHealth']; accessKey: string }) {
  const oldest = health.oldestUndelivered;
  return (
    <Card id="merchant-webhooks" title="Webhook delivery">
      <Details
        items={[
          ['Failure rate, 30 days', `${(health.failureRate * 100).toFixed(1)} %`],
          ['Delivered', String(health.delivered)],
          ['Failed', String(health.failed)],
          ['Waiting', String(health.pending)],
          [
            'Oldest undelivered',
            oldest ? (
              <>
                <span className="mono">{oldest.eventId}</span> of{' '}
                <Link to={`/orders/${encodeURIComponent(oldest.orderNo)}`} className="mono">
                  {oldest.orderNo}
                </Link>
                , <Time ms={oldest.createdAt} />
              </>
            ) : (
              'none'
            ),
          ],
        ]}
      />
      <p>
        <Link to={`/events?merchant=${encodeURIComponent(accessKey)}&status=failed`}>Its failed deliveries</Link>
      </p>
    </Card>
  );
}

function People({
  people,
  accessKey,
  canInvite,
  onInvited,
}: {
  people: Person[];
  accessKey: string;
  canInvite: boolean;
  onInvited: () => void;
}) {
  const action = useAction();
  const [link, setLink] = useState<string>();
  const [email, setEmail] = useState('');
  const invite = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const answer = await api.post<{ email: string; emailed: boolean; setupUrl?: string }>(
        `/merchants/${encodeURIComponent(accessKey)}/invite`,
        { email: email.trim() },
      );
      setLink(answer.setupUrl);
      setEmail('');
      onInvited();
      return answer.emailed
        ? `The invitation was emailed to ${answer.email}.`
        : `${answer.email} is invited as an owner. Send them the link below: it is shown once.`;
    });
  };
  return (
    <Card id="merchant-people" title="People">
      {people.length === 0 ? (
        <p>No one yet. Invite the merchant&apos;s first owner.</p>
      ) : (
        <DataTable
          label="The merchant's people"
          columns={['Email', 'Role', 'State', { heading: 'Since', className: 'hide-narrow' }]}
        >
          {people.map((p) => (
            <tr key={p.email}>
              <td>{p.email}</td>
              <td>{p.role}</td>
              <td>{p.activated ? 'active' : 'invited'}</td>
              <td className="hide-narrow">
                <Time ms={p.createdAt} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {canInvite ? (
        <>
          <ActionStatus action={action} />
          {link ? <CopyableValue value={link} label="setup link" /> : null}
          <form className="inline-form" onSubmit={(event) => void invite(event)}>
            <Field label="Owner's email">
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
            <SubmitButton disabled={action.busy}>Invite an owner</SubmitButton>
          </form>
        </>
      ) : null}
    </Card>
  );
}

/** The merchant's fee plan (its rates: the platform's table with its overrides), and a change proposed. */
function FeePlanCard({
  accessKey,
  fees,
}: {
  accessKey: string;
  fees: { data?: Rates; error?: unknown; loading: boolean; reload: () => void };
}) {
  const canPropose = useCan('money');
  const action = useAction();
  const [kind, setKind] = useState('payment');
  const [currency, setCurrency] = useState('BRL');
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string) => String(form.get(name) ?? '').trim();
    const target = event.currentTarget;
    const fee = { percent: field('percent'), fixed: field('fixed') };
    const plan: FeePlan = structuredClone(fees.data?.overrides ?? {});
    if (kind === 'payout') plan.payouts = { ...plan.payouts, [currency]: fee };
    else {
      const method = field('method');
      plan.payments = { ...plan.payments, [currency]: { ...plan.payments?.[currency], [method]: fee } };
    }
    await action.run(async () => {
      await api.post('/fee-changes', { merchant: accessKey, plan, reason: field('reason') });
      target.reset();
      fees.reload();
      return 'The change is proposed: another operator approves or rejects it on the Money page.';
    });
  };
  const data = fees.data;
  const methods = data?.rates.find((r) => r.currency === currency)?.payments.map((p) => p.method) ?? [];
  return (
    <Card id="merchant-fees" title="Fee plan">
      <LoadStatus state={fees} what="the fee plan" />
      {data ? (
        <>
          <p>
            {Object.keys(data.overrides).length === 0
              ? "The platform's default plan"
              : "Its own plan over the platform's defaults"}
            {data.updatedAt ? (
              <>
                , since <Time ms={data.updatedAt} />
              </>
            ) : null}
            .
          </p>
          <DataTable
            label="Its rates"
            columns={[
              'Currency',
              'For',
              { heading: 'Percent', className: 'num' },
              { heading: 'Fixed', className: 'num' },
            ]}
          >
            {data.rates.flatMap((r) => [
              ...r.payments.map((p) => (
                <tr key={`${r.currency}-${p.method}`}>
                  <td>{r.currency}</td>
                  <td>{p.method} payments</td>
                  <td className="num">{p.feePercent} %</td>
                  <td className="num">{formatMoney(p.feeFixed, r.currency)}</td>
                </tr>
              )),
              <tr key={`${r.currency}-payout`}>
                <td>{r.currency}</td>
                <td>payouts</td>
                <td className="num">{r.payout.feePercent} %</td>
                <td className="num">{formatMoney(r.payout.feeFixed, r.currency)}</td>
              </tr>,
            ])}
          </DataTable>
          {data.changes.length > 0 ? <FeeChangesTable changes={data.changes} onDecided={fees.reload} /> : null}
        </>
      ) : null}
      {canPropose ? (
        <>
          <h3>Propose a change</h3>
          <ActionStatus action={action} />
          <form className="filters" onSubmit={(event) => void submit(event)} aria-label="Propose a fee change">
            <Field label="For">
              {(props) => (
                <select {...props} value={kind} onChange={(event) => setKind(event.target.value)}>
                  <option value="payment">Payments</option>
                  <option value="payout">Payouts</option>
                </select>
              )}
            </Field>
            <Field label="Currency">
              {(props) => (
                <select
                  {...props}
                  name="currency"
                  value={currency}
                  onChange={(event) => setCurrency(event.target.value)}
                >
                  {CURRENCIES.map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </select>
              )}
            </Field>
            {kind === 'payment' ? (
              <Field label="Method">
                {(props) => (
                  <select {...props} name="method">
                    {methods.map((method) => (
                      <option key={method}>{method}</option>
                    ))}
                  </select>
                )}
              </Field>
            ) : null}
            <Field label="Percent">
              {(props) => <input {...props} name="percent" required inputMode="decimal" placeholder="1.5" />}
            </Field>
            <Field label="Fixed">
              {(props) => <input {...props} name="fixed" required inputMode="decimal" placeholder="0.30" />}
            </Field>
            <Field label="Reason">
              {(props) => <input {...props} name="reason" required minLength={3} maxLength={500} />}
            </Field>
            <div className="filter-actions">
              <button type="submit" className="button button-primary" disabled={action.busy}>
                Propose
              </button>
            </div>
          </form>
        </>
      ) : null}
    </Card>
  );
}
