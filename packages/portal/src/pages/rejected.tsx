import { api } from '../api';
import { CopyButton, Details, LoadStatus, PageHeading, Time, useAsync } from '../components';
import { AUTH_STEPS } from '../format';
import { usePageTitle } from '../router';
import type { RejectedRequest } from '../types';

export function RejectedPage() {
  usePageTitle('Refused requests');
  const { data, error, loading, reload } = useAsync(() => api.get<RejectedRequest[]>('/rejected-requests'), []);
  return (
    <>
      <PageHeading>Refused requests</PageHeading>
      <p className="lead">
        Your most recent requests that failed authentication (HTTP 401 <code>UNAUTHORIZED</code>), newest first. The API
        answers every failure the same way; here, in the sandbox only, you see the step that failed and the signature
        base the server built, so you can compare it line by line with the one your code signed.
      </p>
      <div className="toolbar">
        <button type="button" className="button button-small" onClick={reload}>
          Refresh
        </button>
      </div>
      <LoadStatus state={{ data, error, loading }} what="refused requests" />
      {data && data.length === 0 ? <p className="empty">No refused requests in the last 7 days.</p> : null}
      {data?.map((r) => (
        <article key={r.requestId} className="card" aria-labelledby={`rr-${r.requestId}`}>
          <h2 id={`rr-${r.requestId}`} className="h3">
            <span className="mono">
              {r.method} {r.path}
            </span>
          </h2>
          <Details
            items={[
              ['Time', <Time ms={r.createdAt} />],
              ['Failed step', AUTH_STEPS[r.step] ?? r.step],
              ['Reason', r.reason],
              ['Request id', <span className="mono">{r.requestId}</span>],
            ]}
          />
          {r.signatureBase !== null ? (
            <>
              <div className="pre-head">
                <h3 className="label">Signature base built by the server</h3>
                <CopyButton text={r.signatureBase} label={`signature base of ${r.requestId}`} />
              </div>
              <pre
                className="code wrap"
                data-testid="signature-base"
                tabIndex={0}
                aria-label={`Signature base of ${r.requestId}`}
              >
                {r.signatureBase}
              </pre>
            </>
          ) : (
            <p className="muted">The request failed before a signature base could be built.</p>
          )}
        </article>
      ))}
    </>
  );
}
