/**
 * Money across the platform: balances per currency, fees earned, the day's volume; balance
 * adjustments (one operator proposes with a reason, another approves or rejects); fee-plan
 * changes waiting for a decision; reconciliation of a channel's day.
 */
import { type FormEvent, useState } from 'react';
import { useAction } from '../../action';
import {
  ActionStatus,
  Card,
  Field,
  LoadStatus,
  PageHeading,
  StatusBadge,
  SubmitButton,
  useAsync,
} from '../../components';
import { CURRENCIES, formatMoney } from '../../format';
import { ACTIONS_COLUMN, DataTable } from '../../table';
import { api, queryString } from '../../api';
import { Link, usePageTitle } from '../../router';
import { useCan, useSession } from '../session';
import { Time } from '../time';
import type { Adjustment, FeeChange } from '../types';

interface Totals {
  currency: string;
  merchantsAvailable: string;
  merchantsReserved: string;
  feesEarned: string;
  channelClearing: string;
  adjustments: string;
}
interface DayVolume {
  currency: string;
  payments: { count: number; amount: string };
  payouts: { count: number; amount: string };
  feesEarned: string;
}

const today = () => new Date().toISOString().slice(0, 10);

export function MoneyPage() {
  usePageTitle('Money');
  const [day, setDay] = useState(today);
  const money = useAsync(
    () => api.get<{ totals: Totals[]; day: { from: number; to: number; volume: DayVolume[] } }>(`/money?day=${day}`),
    [day],
  );
  return (
    <>
      <PageHeading>Money</PageHeading>
      <LoadStatus state={money} what="the platform's money" />
      {money.data ? (
        <Card id="totals" title="Platform balances">
          {money.data.totals.length === 0 ? <p className="muted">No money has moved yet.</p> : null}
          {money.data.totals.map((t) => (
            <dl key={t.currency} className="kpis" aria-label={`${t.currency} totals`}>
              <div className="kpi">
                <dt>Merchants&apos; available, {t.currency}</dt>
                <dd>{formatMoney(t.merchantsAvailable, t.currency)}</dd>
              </div>
              <div className="kpi">
                <dt>Reserved for payouts</dt>
                <dd>{formatMoney(t.merchantsReserved, t.currency)}</dd>
              </div>
              <div className="kpi">
                <dt>Fees earned</dt>
                <dd>{formatMoney(t.feesEarned, t.currency)}</dd>
              </div>
              <div className="kpi">
                <dt>Channel clearing</dt>
                <dd>{formatMoney(t.channelClearing, t.currency)}</dd>
              </div>
              <div className="kpi">
                <dt>Adjustments booked</dt>
                <dd>{formatMoney(t.adjustments, t.currency)}</dd>
              </div>
            </dl>
          ))}
        </Card>
      ) : null}
      <Card id="day" title="The day's volume">
        <div className="inline-form">
          <Field label="Day (UTC)">
            {(props) => (
              <input
                {...props}
                type="date"
                value={day}
                onChange={(event) => event.target.value && setDay(event.target.value)}
              />
            )}
          </Field>
        </div>
        {money.data ? (
          money.data.day.volume.length === 0 ? (
            <p className="muted">Nothing moved that day.</p>
          ) : (
            <DataTable
              label="The day's volume"
              columns={[
                'Currency',
                { heading: 'Payments', className: 'num' },
                { heading: 'Payouts', className: 'num' },
                { heading: 'Fees earned', className: 'num' },
              ]}
            >
              {money.data.day.volume.map((v) => (
                <tr key={v.currency}>
                  <td>{v.currency}</td>
                  <td className="num">
                    {formatMoney(v.payments.amount, v.currency)}{' '}
                    <span className="muted small">({v.payments.count})</span>
                  </td>
                  <td className="num">
                    {formatMoney(v.payouts.amount, v.currency)} <span className="muted small">({v.payouts.count})</span>
                  </td>
                  <td className="num">{formatMoney(v.feesEarned, v.currency)}</td>
                </tr>
              ))}
            </DataTable>
          )
        ) : null}
      </Card>
      <Adjustments onBooked={money.reload} />
      <PendingFeeChanges />
      <Reconciliation />
    </>
  );
}

function Adjustments({ onBooked }: { onBooked: () => void }) {
  const [status, setStatus] = useState('PROPOSED');
  const list = useAsync(
    () => api.get<{ adjustments: Adjustment[] }>(`/adjustments${queryString({ status })}`),
    [status],
  );
  const canPropose = useCan('money');
  const session = useSession();
  const action = useAction();
  const decide = (adjustment: Adjustment, decision: 'approve' | 'reject') =>
    void action.run(
      async () => {
        const done = await api.post<Adjustment>(
          `/adjustments/${encodeURIComponent(adjustment.adjustmentId)}/${decision}`,
          {},
        );
        list.reload();
        onBooked();
        return done.status === 'BOOKED'
          ? `Booked: ${formatMoney(done.amount, done.currency)} to ${done.merchant}.`
          : `Rejected: nothing was booked.`;
      },
      { name: adjustment.adjustmentId, onError: list.reload },
    );
  const propose = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string) => String(form.get(name) ?? '').trim();
    const target = event.currentTarget;
    await action.run(async () => {
      const done = await api.post<Adjustment>('/adjustments', {
        merchant: field('merchant'),
        currency: field('currency'),
        amount: field('amount'),
        reason: field('reason'),
      });
      target.reset();
      setStatus('PROPOSED');
      list.reload();
      return `Proposed ${formatMoney(done.amount, done.currency)} for ${done.merchant}: another operator approves it.`;
    });
  };
  return (
    <Card id="adjustments" title="Balance adjustments">
      <p className="hint">
        A credit is positive, a debit negative. Each takes two people: the one who proposes it cannot approve it.
      </p>
      <ActionStatus action={action} />
      {canPropose ? (
        <form className="filters" onSubmit={(event) => void propose(event)} aria-label="Propose an adjustment">
          <Field label="Merchant" hint="Its access key.">
            {(props) => <input {...props} name="merchant" required maxLength={100} spellCheck={false} />}
          </Field>
          <Field label="Currency">
            {(props) => (
              <select {...props} name="currency">
                {CURRENCIES.map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Amount" hint="Signed: -5.00 debits.">
            {(props) => <input {...props} name="amount" required inputMode="decimal" pattern="-?[0-9]+(\.[0-9]+)?" />}
          </Field>
          <Field label="Reason" hint="The merchant sees it with the booking.">
            {(props) => <input {...props} name="reason" required minLength={3} maxLength={500} />}
          </Field>
          <div className="filter-actions">
            <button type="submit" className="button button-primary" disabled={action.busy}>
              Propose adjustment
            </button>
          </div>
        </form>
      ) : null}
      <div className="inline-form">
        <Field label="Show">
          {(props) => (
            <select {...props} value={status} onChange={(event) => setStatus(event.target.value)}>
              <option value="PROPOSED">Waiting for approval</option>
              <option value="BOOKED">Booked</option>
              <option value="REJECTED">Rejected</option>
              <option value="">All</option>
            </select>
          )}
        </Field>
      </div>
      <LoadStatus state={list} what="adjustments" />
      {list.data ? (
        <DataTable
          label="Adjustments"
          columns={[
            'Merchant',
            { heading: 'Amount', className: 'num' },
            'Reason',
            'Status',
            { heading: 'Proposed', className: 'hide-narrow' },
            { heading: 'Decided', className: 'hide-narrow' },
            ACTIONS_COLUMN,
          ]}
        >
          {list.data.adjustments.length === 0 ? (
            <tr>
              <td colSpan={7} className="empty">
                None.
              </td>
            </tr>
          ) : (
            list.data.adjustments.map((a) => (
              <tr key={a.adjustmentId}>
                <td>
                  <Link to={`/merchants/${encodeURIComponent(a.merchant)}`} className="mono">
                    {a.merchant}
                  </Link>
                </td>
                <td className={`num ${a.amount.startsWith('-') ? 'debit' : 'credit'}`}>
                  {formatMoney(a.amount, a.currency)}
                </td>
                <td>{a.reason}</td>
                <td>
                  <StatusBadge status={a.status} />
                </td>
                <td className="hide-narrow">
                  {a.proposedBy}
                  <div className="small muted">
                    <Time ms={a.proposedAt} />
                  </div>
                </td>
                <td className="hide-narrow">
                  {a.decidedBy ?? '—'}
                  {a.decidedAt ? (
                    <div className="small muted">
                      <Time ms={a.decidedAt} />
                    </div>
                  ) : null}
                </td>
                <td>
                  {canPropose && a.status === 'PROPOSED' ? (
                    a.proposedBy === session?.email ? (
                      <span className="small muted">Another operator decides</span>
                    ) : (
                      <div className="button-row">
                        <button
                          type="button"
                          className="button button-small button-primary"
                          disabled={action.busy}
                          aria-label={`Approve ${a.amount} ${a.currency} for ${a.merchant}`}
                          onClick={() => decide(a, 'approve')}
                        >
                          Approve
                        </button>
                        <button
                          type="button"
                          className="button button-small button-danger"
                          disabled={action.busy}
                          aria-label={`Reject ${a.amount} ${a.currency} for ${a.merchant}`}
                          onClick={() => decide(a, 'reject')}
                        >
                          Reject
                        </button>
                      </div>
                    )
                  ) : null}
                </td>
              </tr>
            ))
          )}
        </DataTable>
      ) : null}
    </Card>
  );
}

/**
 * Fee-plan changes with their decision buttons (for the roles that decide, and not the proposer).
 * With none, `empty` in words (or nothing): the table stays mounted either way, so the outcome of
 * the last decision stays shown once the list it emptied is read again.
 */
export function FeeChangesTable({
  changes,
  onDecided,
  empty,
}: {
  changes: readonly FeeChange[];
  onDecided: () => void;
  empty?: string;
}) {
  const canDecide = useCan('money');
  const session = useSession();
  const action = useAction();
  const decide = (change: FeeChange, decision: 'approve' | 'reject') =>
    void action.run(
      async () => {
        await api.post(`/fee-changes/${encodeURIComponent(change.changeId)}/${decision}`, {});
        onDecided();
        return decision === 'approve'
          ? `Applied: ${change.merchant}'s orders are charged by the new plan from the next one on.`
          : 'Rejected: the plan stays as it was.';
      },
      { name: change.changeId, onError: onDecided },
    );
  if (changes.length === 0) {
    return (
      <>
        <ActionStatus action={action} />
        {empty !== undefined ? <p className="muted">{empty}</p> : null}
      </>
    );
  }
  return (
    <>
      <ActionStatus action={action} />
      <DataTable
        label="Fee plan changes"
        columns={[
          'Merchant',
          'Plan proposed',
          'Reason',
          'Status',
          { heading: 'Proposed', className: 'hide-narrow' },
          ACTIONS_COLUMN,
        ]}
      >
        {changes.map((c) => (
          <tr key={c.changeId}>
            <td className="mono">{c.merchant}</td>
            <td>
              <code className="mono small break">{JSON.stringify(c.plan)}</code>
            </td>
            <td>{c.reason}</td>
            <td>
              <StatusBadge status={c.status} />
            </td>
            <td className="hide-narrow">
              {c.proposedBy}
              <div className="small muted">
                <Time ms={c.proposedAt} />
              </div>
            </td>
            <td>
              {canDecide && c.status === 'PROPOSED' ? (
                c.proposedBy === session?.email ? (
                  <span className="small muted">Another operator decides</span>
                ) : (
                  <div className="button-row">
                    <button
                      type="button"
                      className="button button-small button-primary"
                      disabled={action.busy}
                      aria-label={`Approve the fee plan of ${c.merchant}`}
                      onClick={() => decide(c, 'approve')}
                    >
                      Approve
                    </button>
                    <button
                      type="button"
                      className="button button-small button-danger"
                      disabled={action.busy}
                      aria-label={`Reject the fee plan of ${c.merchant}`}
                      onClick={() => decide(c, 'reject')}
                    >
                      Reject
                    </button>
                  </div>
                )
              ) : null}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function PendingFeeChanges() {
  const list = useAsync(() => api.get<{ changes: FeeChange[] }>('/fee-changes'), []);
  const pending = list.data?.changes.filter((c) => c.status === 'PROPOSED');
  return (
    <Card id="fee-changes" title="Fee plan changes waiting">
      <LoadStatus state={list} what="fee plan changes" />
      {pending ? (
        <FeeChangesTable changes={pending} onDecided={list.reload} empty="None. A merchant's page proposes one." />
      ) : null}
    </Card>
  );
}

interface Report {
  channel: string;
  date: string;
  fileLines: number;
  matched: number;
  mismatches: { kind: string; type: string; reference: string; ours?: string; theirs?: string }[];
  abandoned: { reference: string; theirs: string }[];
}

function Reconciliation() {
  const canRun = useCan('files');
  const channels = useAsync(() => api.get<{ channels: { name: string }[] }>('/channels'), []);
  const action = useAction();
  const [report, setReport] = useState<Report>();
  if (!canRun) return null;
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const settlement = String(form.get('settlement') ?? '').trim();
    await action.run(async () => {
      const answer = await api.post<Report>('/reconciliation', {
        channel: String(form.get('channel') ?? ''),
        date: String(form.get('date') ?? ''),
        ...(settlement ? { settlement } : {}),
      });
      setReport(answer);
      return `Reconciled ${answer.channel} on ${answer.date}: ${answer.matched} matched, ${answer.mismatches.length} mismatched.`;
    });
  };
  return (
    <Card id="reconciliation" title="Reconciliation">
      <p className="hint">
        A channel&apos;s day against its settlement file, or against its own list of the day. It changes nothing.
      </p>
      <ActionStatus action={action} loadError={channels.error} />
      {channels.data?.channels.length === 0 ? (
        <p className="muted">No channel is configured: there is nothing to reconcile.</p>
      ) : (
        <form className="stack" onSubmit={(event) => void submit(event)}>
          <div className="inline-form">
            <Field label="Channel">
              {(props) => (
                <select {...props} name="channel" required>
                  {(channels.data?.channels ?? []).map((c) => (
                    <option key={c.name}>{c.name}</option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Day (UTC)">
              {(props) => <input {...props} type="date" name="date" required defaultValue={today()} />}
            </Field>
          </div>
          <Field
            label="Settlement file (CSV or camt.054)"
            hint="The channel's CSV or a bank's camt.054 notification, as paygate reconcile reads them. Optional for a channel that keeps its own list of the day."
          >
            {(props) => <textarea {...props} name="settlement" rows={3} spellCheck={false} />}
          </Field>
          <SubmitButton disabled={action.busy || !channels.data}>Reconcile</SubmitButton>
        </form>
      )}
      {report && report.mismatches.length > 0 ? (
        <DataTable label="Mismatches" columns={['Kind', 'Type', 'Reference', 'Ours', 'Theirs']}>
          {report.mismatches.map((m, i) => (
            <tr key={i}>
              <td>{m.kind}</td>
              <td>{m.type}</td>
              <td className="mono">{m.reference}</td>
              <td>{m.ours ?? '—'}</td>
              <td>{m.theirs ?? '—'}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {report && report.abandoned.length > 0 ? (
        <DataTable
          label="Abandoned charges: made at the channel for a create that answered CHANNEL_UNAVAILABLE, never paid"
          columns={['Reference', 'Theirs']}
        >
          {report.abandoned.map((a) => (
            <tr key={a.reference}>
              <td className="mono">{a.reference}</td>
              <td>{a.theirs}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </Card>
  );
}
