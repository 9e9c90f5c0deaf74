import { API_BASE, api, queryString } from '../api';
import { AUDIT_ACTIONS, auditSentence } from '../audit-sentences';
import { Field, LoadStatus, PageHeading, TeamTabs, Time, useAsync } from '../components';
import { DateRangeFields, FilterActions, submitFilters } from '../lists';
import { useLocation, usePageTitle } from '../router';
import { DataTable } from '../table';
import type { AuditEntry } from '../types';

/** The merchant's audit trail (owners only): who did what, when, from where; filters and a CSV export. */
export function AuditPage() {
  usePageTitle('Audit trail');
  const { search } = useLocation();
  const filters = {
    person: search.get('person') ?? undefined,
    action: search.get('action') ?? undefined,
    from: search.get('from') ?? undefined,
    to: search.get('to') ?? undefined,
  };
  const query = queryString(filters);
  const { data, error, loading } = useAsync(
    () => api.get<{ entries: AuditEntry[]; max: number }>(`/audit${query}`),
    [query],
  );

  const submit = submitFilters('/audit', ['person', 'action', 'from', 'to']);

  return (
    <>
      <PageHeading>Audit trail</PageHeading>
      <TeamTabs current="audit" />
      <p className="lead">
        Every change to this merchant, who made it and from where: sign-ins, keys, webhook events, canceled orders,
        people. Entries are never changed or removed, and each carries the hash of the one before it.
      </p>
      <form className="filters" onSubmit={submit} aria-label="Filter the audit trail">
        <Field label="Person (email)">
          {(props) => <input {...props} type="text" name="person" defaultValue={filters.person} />}
        </Field>
        <Field label="Action">
          {(props) => (
            <select {...props} name="action" defaultValue={filters.action ?? ''}>
              <option value="">All actions</option>
              {Object.entries(AUDIT_ACTIONS).map(([action, { label }]) => (
                <option key={action} value={action}>
                  {label}
                </option>
              ))}
              {filters.action && !(filters.action in AUDIT_ACTIONS) ? (
                <option value={filters.action}>{filters.action}</option>
              ) : null}
            </select>
          )}
        </Field>
        <DateRangeFields
          from={filters.from ? Number(filters.from) : undefined}
          to={filters.to ? Number(filters.to) : undefined}
        />
        <FilterActions path="/audit" submitLabel="Filter" />
      </form>
      <p>
        <a className="button" href={`${API_BASE}/audit/export.csv${query}`} download>
          Download CSV
        </a>{' '}
        <span className="hint inline-hint">Every entry matching the filters (up to 50,000), oldest first.</span>
      </p>
      <LoadStatus state={{ data, error, loading }} what="the audit trail" />
      {data ? (
        <>
          <p className="muted">
            {data.entries.length === data.max
              ? `The newest ${data.max} entries, newest first: narrow the filters or download the CSV for more.`
              : `${data.entries.length} ${data.entries.length === 1 ? 'entry' : 'entries'}, newest first.`}
          </p>
          <DataTable
            label="Audit entries"
            columns={[
              'When',
              'What happened',
              { heading: 'Address', className: 'hide-narrow' },
              { heading: 'Request', className: 'hide-narrow' },
            ]}
          >
            {data.entries.map((entry) => (
              <tr key={entry.id}>
                <td>
                  <Time ms={Date.parse(entry.at)} />
                </td>
                <td className="audit-what">
                  <span className="audit-sentence">{auditSentence(entry)}</span>
                  <details className="audit-raw">
                    <summary>
                      Entry <span className="mono">{entry.action}</span>
                    </summary>
                    <pre className="code wrap small">{JSON.stringify(entry, null, 2)}</pre>
                  </details>
                </td>
                <td className="mono hide-narrow">{entry.ip ?? '—'}</td>
                <td className="mono small hide-narrow">{entry.requestId ?? '—'}</td>
              </tr>
            ))}
          </DataTable>
          {data.entries.length === 0 ? <p className="empty">No entry matches these filters.</p> : null}
        </>
      ) : null}
    </>
  );
}
