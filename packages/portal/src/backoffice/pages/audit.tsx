/**
 * The whole audit trail, filtered by operator, merchant, action and time; its CSV; and the
 * verification of its hash chain.
 */
import { Card, Field, LoadStatus, PageHeading, useAsync } from '../../components';
import { DateRangeFields, FilterActions, FilterPanel, numberOrUndefined, submitFilters } from '../../lists';
import { DataTable } from '../../table';
import { api, downloadUrl, queryString } from '../../api';
import { useLocation, usePageTitle } from '../../router';
import { Time } from '../time';
import type { AuditEntry } from '../types';

const FILTERS = ['operator', 'merchant', 'action', 'from', 'to'] as const;

export function AuditPage() {
  usePageTitle('Audit trail');
  const { search } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((name) => [name, search.get(name) ?? ''])) as Record<
    (typeof FILTERS)[number],
    string
  >;
  const key = search.toString();
  const trail = useAsync(() => api.get<{ entries: AuditEntry[]; max: number }>(`/audit${queryString(filters)}`), [key]);
  const chain = useAsync(
    () =>
      api.get<
        | { ok: true; checked: number }
        | { ok: false; checked: number; broken: { id: string; at: string; action: string; reason: string } }
      >('/audit/verify'),
    [],
  );
  const submit = submitFilters('/audit', FILTERS);
  return (
    <>
      <PageHeading>Audit trail</PageHeading>
      <Card id="chain" title="Chain verification">
        <LoadStatus state={chain} what="the verification" />
        {chain.data ? (
          chain.data.ok ? (
            <p data-testid="chain">
              <span className="badge badge-good">Intact</span> All {chain.data.checked.toLocaleString()} entries chain
              to their predecessors: none was changed or removed.
            </p>
          ) : (
            <p data-testid="chain">
              <span className="badge badge-bad">Broken</span> Entry {chain.data.broken.id} ({chain.data.broken.action},{' '}
              <Time ms={chain.data.broken.at} />
              ): {chain.data.broken.reason}. {chain.data.checked} entries checked.
            </p>
          )
        ) : null}
      </Card>
      <FilterPanel>
        <form className="filters" onSubmit={submit} aria-label="Filter the audit trail" key={key}>
          <Field label="Operator" hint="Their email.">
            {(props) => <input {...props} type="email" name="operator" defaultValue={filters.operator} />}
          </Field>
          <Field label="Merchant" hint="Its access key.">
            {(props) => <input {...props} name="merchant" defaultValue={filters.merchant} />}
          </Field>
          <Field label="Action" hint="For example adjustment.approved.">
            {(props) => <input {...props} name="action" defaultValue={filters.action} />}
          </Field>
          <DateRangeFields from={numberOrUndefined(filters.from)} to={numberOrUndefined(filters.to)} />
          <FilterActions path="/audit" />
        </form>
      </FilterPanel>
      <LoadStatus state={trail} what="the audit trail" />
      {trail.data ? (
        <>
          <p className="total">
            {trail.data.entries.length === trail.data.max
              ? `The newest ${trail.data.max} entries; the CSV holds more.`
              : `${trail.data.entries.length} ${trail.data.entries.length === 1 ? 'entry' : 'entries'}, newest first.`}{' '}
            <a className="button button-small" href={downloadUrl(`/audit/export.csv${queryString(filters)}`)} download>
              Export CSV
            </a>
          </p>
          <DataTable
            label="Audit entries"
            busy={trail.loading}
            columns={['When', 'Who', 'Action', 'Merchant', { heading: 'Detail', className: 'hide-narrow' }]}
          >
            {trail.data.entries.map((e) => (
              <tr key={e.id}>
                <td>
                  <Time ms={e.at} />
                </td>
                <td className="audit-who">
                  {e.actor.email ?? (
                    <span className="muted">{e.actor.kind === 'operator' ? 'host command line' : e.actor.kind}</span>
                  )}
                  {e.actor.email ? <div className="small muted">{e.actor.kind}</div> : null}
                </td>
                <td className="mono small audit-action">
                  {e.action}
                  {e.object ? <div className="muted">{e.object}</div> : null}
                </td>
                <td className="mono small">{e.merchant ?? '—'}</td>
                <td className="hide-narrow">
                  {e.detail ? <code className="mono small break">{JSON.stringify(e.detail)}</code> : '—'}
                </td>
              </tr>
            ))}
          </DataTable>
        </>
      ) : null}
    </>
  );
}
