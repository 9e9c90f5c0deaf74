/**
 * Channels: each configured channel's health (its last success, error rate, what polling waits
 * for), its notifications, and for a file channel the files sent with their state and the bank's
 * group status, the files received (set aside with the reason) and each sent file's XML; across
 * the file channels, the credit transfers received that matched no payment and the batch bookings
 * that did not match the file they name.
 */
import { useState } from 'react';
import { Card, Details, LoadStatus, PageHeading, useAsync } from '../../components';
import { formatMoney } from '../../format';
import { DataTable } from '../../table';
import { api, downloadUrl } from '../../api';
import { Link, usePageTitle } from '../../router';
import { useCan } from '../session';
import { Time } from '../time';

interface Health {
  name: string;
  kind: string;
  methods: readonly string[];
  payouts: boolean;
  exchanges: {
    since: number;
    calls: number;
    errors: number;
    errorRate: number;
    lastSuccessAt: number | null;
    lastErrorAt: number | null;
  };
  polling: { payments: Record<string, unknown>; payouts: Record<string, unknown> };
  lastNotificationAt: number | null;
  files?: { unacknowledged: number; setAside: number };
}

interface Notification {
  id: string;
  eventId: string;
  receivedAt: number;
  orderNo: string | null;
  outcome: string;
  detail: string | null;
}

interface Files {
  sent: {
    msgId: string;
    name: string;
    transactions: number;
    controlSum: string;
    state: string;
    groupStatus: string | null;
    instant: boolean;
    createdAt: number;
    uploadedAt: number | null;
    lastError: string | null;
  }[];
  received: { name: string; message: string | null; state: string; reason: string | null; receivedAt: number }[];
  setAside: { name: string; message: string | null; state: string; reason: string | null; receivedAt: number }[];
}

const BACKLOG_WORDS: Readonly<Record<string, string>> = {
  open: 'open',
  due: 'due now',
  nextPollAt: 'next poll',
  oldestOpenSince: 'oldest open since',
};

/** What polling waits for, in words: its numbers and times as the server gives them. */
function Backlog({ of }: { of: Record<string, unknown> }) {
  const parts = Object.entries(of).map(([key, value], i) => (
    <span key={key}>
      {i > 0 ? '; ' : ''}
      {BACKLOG_WORDS[key] ?? key}{' '}
      {typeof value === 'number' && /(At|Since)$/.test(key) ? (
        <Time ms={value} />
      ) : value === null ? (
        '—'
      ) : (
        String(value)
      )}
    </span>
  ));
  return <>{parts}</>;
}

const FILE_TONES: Readonly<Record<string, string>> = {
  acknowledged: 'good',
  applied: 'good',
  uploaded: 'info',
  built: 'info',
  set_aside: 'warn',
};

/** A file's state in its colour (the text says it too). */
function FileState({ state }: { state: string }) {
  return <span className={`badge badge-${FILE_TONES[state] ?? 'neutral'}`}>{state.replace('_', ' ')}</span>;
}

export function ChannelsPage() {
  usePageTitle('Channels');
  const channels = useAsync(() => api.get<{ channels: Health[] }>('/channels'), []);
  return (
    <>
      <PageHeading>Channels</PageHeading>
      <p className="lead">Calls and errors of the last 24 hours; polling as it stands now.</p>
      <LoadStatus state={channels} what="channels" />
      {channels.data?.channels.length === 0 ? (
        <p>No channel is configured: the built-in sandbox serves every order.</p>
      ) : null}
      {channels.data?.channels.map((c) => (
        <Channel key={c.name} health={c} />
      ))}
      {channels.data?.channels.some((c) => c.files !== undefined) ? (
        <>
          <UnmatchedCredits />
          <MismatchedBatches />
        </>
      ) : null}
    </>
  );
}

function Channel({ health: c }: { health: Health }) {
  const [open, setOpen] = useState<'notifications' | 'files' | undefined>(c.files ? 'files' : undefined);
  const id = `channel-${c.name.replace(/\W+/g, '-')}`;
  const rate = c.exchanges.errorRate;
  return (
    <Card id={id} title={`${c.name} (${c.kind})`}>
      <Details
        items={[
          ['Serves', [...c.methods, ...(c.payouts ? ['payouts'] : [])].join(', ') || '—'],
          ['Calls, 24 h', `${c.exchanges.calls} (${c.exchanges.errors} failed)`],
          [
            'Error rate',
            <span className={`badge badge-${rate === 0 ? 'good' : rate < 0.05 ? 'warn' : 'bad'}`}>
              {(rate * 100).toFixed(1)} %
            </span>,
          ],
          ['Last success', <Time ms={c.exchanges.lastSuccessAt} />],
          ['Last error', <Time ms={c.exchanges.lastErrorAt} />],
          ['Last notification', <Time ms={c.lastNotificationAt} />],
          ['Polling, payments', <Backlog of={c.polling.payments} />],
          ['Polling, payouts', <Backlog of={c.polling.payouts} />],
          ...(c.files
            ? ([
                ['Files the bank has not answered', String(c.files.unacknowledged)],
                ['Files set aside', String(c.files.setAside)],
              ] as [string, string][])
            : []),
        ]}
      />
      <div className="button-row">
        <button
          type="button"
          className="button button-small"
          aria-expanded={open === 'notifications'}
          onClick={() => setOpen(open === 'notifications' ? undefined : 'notifications')}
        >
          Notifications
        </button>
        {c.files ? (
          <button
            type="button"
            className="button button-small"
            aria-expanded={open === 'files'}
            onClick={() => setOpen(open === 'files' ? undefined : 'files')}
          >
            Bank files
          </button>
        ) : null}
      </div>
      {open === 'notifications' ? <Notifications channel={c.name} /> : null}
      {open === 'files' ? <BankFiles channel={c.name} /> : null}
    </Card>
  );
}

function Notifications({ channel }: { channel: string }) {
  const list = useAsync(
    () => api.get<{ notifications: Notification[] }>(`/channels/${encodeURIComponent(channel)}/notifications`),
    [channel],
  );
  return (
    <>
      <LoadStatus state={list} what="notifications" />
      {list.data ? (
        list.data.notifications.length === 0 ? (
          <p className="muted">No notification received.</p>
        ) : (
          <DataTable label={`Notifications from ${channel}`} columns={['Received', 'Event', 'Order', 'Outcome']}>
            {list.data.notifications.map((n) => (
              <tr key={n.id}>
                <td>
                  <Time ms={n.receivedAt} />
                </td>
                <td className="mono">{n.eventId}</td>
                <td>
                  {n.orderNo ? (
                    <Link to={`/orders/${encodeURIComponent(n.orderNo)}`} className="mono">
                      {n.orderNo}
                    </Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  {n.outcome}
                  {n.detail ? <span className="muted small"> {n.detail}</span> : null}
                </td>
              </tr>
            ))}
          </DataTable>
        )
      ) : null}
    </>
  );
}

function BankFiles({ channel }: { channel: string }) {
  const files = useAsync(() => api.get<Files>(`/channels/${encodeURIComponent(channel)}/files`), [channel]);
  const canDownload = useCan('files');
  const data = files.data;
  return (
    <>
      <LoadStatus state={files} what="bank files" />
      {data ? (
        <>
          <h3>Sent</h3>
          {data.sent.length === 0 ? (
            <p className="muted">No file sent yet.</p>
          ) : (
            <DataTable
              label={`Files sent to ${channel}`}
              columns={[
                'File',
                'State',
                "Bank's group status",
                { heading: 'Transfers', className: 'num' },
                'Created',
                'XML',
              ]}
            >
              {data.sent.map((f) => (
                <tr key={f.msgId}>
                  <td>
                    <span className="mono">{f.name}</span>
                    <div className="small muted mono">
                      {f.msgId}
                      {f.instant ? ' · Instant' : ''}
                    </div>
                    {f.lastError ? <div className="small debit">{f.lastError}</div> : null}
                  </td>
                  <td>
                    <FileState state={f.state} />
                  </td>
                  <td>{f.groupStatus ?? '—'}</td>
                  <td className="num">
                    {f.transactions} · EUR {f.controlSum}
                  </td>
                  <td>
                    <Time ms={f.createdAt} />
                  </td>
                  <td>
                    {canDownload ? (
                      <a
                        href={downloadUrl(
                          `/channels/${encodeURIComponent(channel)}/files/${encodeURIComponent(f.msgId)}/xml`,
                        )}
                        download
                        aria-label={`Download the XML of ${f.name}`}
                      >
                        Download
                      </a>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          <h3>Set aside</h3>
          {data.setAside.length === 0 ? (
            <p className="muted">No file set aside.</p>
          ) : (
            <DataTable label={`Files from ${channel} set aside`} columns={['File', 'Message', 'Reason', 'Received']}>
              {data.setAside.map((f) => (
                <tr key={`${f.name}-${f.receivedAt}`}>
                  <td className="mono">{f.name}</td>
                  <td>{f.message ?? 'unreadable'}</td>
                  <td>{f.reason}</td>
                  <td>
                    <Time ms={f.receivedAt} />
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          <h3>Received</h3>
          {data.received.length === 0 ? (
            <p className="muted">No file received yet.</p>
          ) : (
            <DataTable
              label={`Files received from ${channel}`}
              columns={['File', 'Message', 'State', 'Received', 'XML']}
            >
              {data.received.map((f) => (
                <tr key={`${f.name}-${f.receivedAt}`}>
                  <td className="mono">{f.name}</td>
                  <td>{f.message ?? 'unreadable'}</td>
                  <td>
                    <FileState state={f.state} />
                    {f.reason ? <span className="small muted"> {f.reason}</span> : null}
                  </td>
                  <td>
                    <Time ms={f.receivedAt} />
                  </td>
                  <td>
                    {canDownload ? (
                      <a
                        href={downloadUrl(
                          `/channels/${encodeURIComponent(channel)}/received/${encodeURIComponent(f.name)}/xml`,
                        )}
                        download
                        aria-label={`Download the XML received as ${f.name}`}
                      >
                        Download
                      </a>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      ) : null}
    </>
  );
}

interface Credit {
  id: string;
  channel: string;
  reason: string | null;
  orderNo: string | null;
  amount: string;
  currency: string;
  reference: string | null;
  remittance: string | null;
  debtorName: string | null;
  debtorIban: string | null;
  bookingDate: string | null;
  accountIban: string | null;
  file: string;
  receivedAt: number;
}

const CREDIT_REASONS: Record<string, string> = {
  no_reference: 'no reference',
  unknown_reference: 'unknown reference',
  other_amount: 'another amount than the payment’s',
  payment_final: 'the payment was already final',
  expired: 'the payment had expired',
};

/** Credit transfers received on the file channels' accounts that settled no payment. */
function UnmatchedCredits() {
  const list = useAsync(() => api.get<{ credits: Credit[] }>('/channels/credits'), []);
  const credits = list.data?.credits;
  return (
    <Card id="unmatched-credits" title="Unmatched credits">
      <LoadStatus state={list} what="unmatched credits" />
      {credits ? (
        credits.length === 0 ? (
          <p className="muted">None: every credit transfer received matched a payment.</p>
        ) : (
          <DataTable
            label="Unmatched credit transfers"
            columns={[
              'Reason',
              { heading: 'Amount', className: 'num' },
              'Reference',
              'Booked',
              'Account',
              { heading: 'From', className: 'hide-narrow' },
            ]}
          >
            {credits.map((c) => (
              <tr key={c.id}>
                <td>
                  {c.reason ? (CREDIT_REASONS[c.reason] ?? c.reason) : '—'}
                  {c.orderNo ? (
                    <div className="small">
                      <Link to={`/orders/${encodeURIComponent(c.orderNo)}`} className="mono">
                        {c.orderNo}
                      </Link>
                    </div>
                  ) : null}
                </td>
                <td className="num">{formatMoney(c.amount, c.currency)}</td>
                <td className="mono break">{c.reference ?? c.remittance ?? '—'}</td>
                <td>{c.bookingDate ?? '—'}</td>
                <td>
                  <span className="mono break">{c.accountIban ?? '—'}</span>
                  <div className="small muted">
                    {c.channel} · <span className="mono">{c.file}</span>
                  </div>
                </td>
                <td className="hide-narrow">
                  {c.debtorName ?? '—'}
                  {c.debtorIban ? <div className="small muted mono">{c.debtorIban}</div> : null}
                </td>
              </tr>
            ))}
          </DataTable>
        )
      ) : null}
    </Card>
  );
}

interface Batch {
  id: string;
  channel: string;
  msgId: string | null;
  pmtInfId: string | null;
  reason: string | null;
  booked: { transactions: number | null; total: string };
  expected: { msgId: string; pmtInfId: string; transactions: number; total: string } | null;
  file: string;
  receivedAt: number;
}

/** Batch bookings that did not match the file they name: nothing of them was applied. */
function MismatchedBatches() {
  const list = useAsync(() => api.get<{ batchBookings: Batch[] }>('/channels/batch-bookings'), []);
  const batches = list.data?.batchBookings;
  return (
    <Card id="mismatched-batches" title="Batch bookings that did not match">
      <LoadStatus state={list} what="batch bookings" />
      {batches ? (
        batches.length === 0 ? (
          <p className="muted">None: every batch booking matched the file it named.</p>
        ) : (
          <DataTable
            label="Mismatched batch bookings"
            columns={['File named', 'Reason', 'Booked', 'Expected', 'Received']}
          >
            {batches.map((b) => (
              <tr key={b.id}>
                <td className="mono">
                  {b.msgId ?? '—'}
                  <div className="small muted">{b.pmtInfId ?? ''}</div>
                </td>
                <td>{b.reason ?? '—'}</td>
                <td className="num">
                  {b.booked.transactions ?? '?'} · EUR {b.booked.total}
                </td>
                <td className="num">
                  {b.expected ? `${b.expected.transactions} · EUR ${b.expected.total}` : 'no such file'}
                </td>
                <td>
                  <Time ms={b.receivedAt} />
                  <div className="small muted">
                    {b.channel} · <span className="mono">{b.file}</span>
                  </div>
                </td>
              </tr>
            ))}
          </DataTable>
        )
      ) : null}
    </Card>
  );
}
