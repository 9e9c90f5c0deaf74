/**
 * Every time the back office shows goes through `Time` (one helper, so the format is changed in
 * one place): the user's locale, date and time to the second, the exact ISO instant as its title.
 */
import { formatTime, isoTime } from '../format';

export function Time({ ms }: { ms: number | string | undefined | null }) {
  if (ms === undefined || ms === null) return <span className="muted">—</span>;
  const at = typeof ms === 'string' ? Date.parse(ms) : ms;
  if (!Number.isFinite(at)) return <span className="muted">—</span>;
  return (
    <time dateTime={isoTime(at)} title={isoTime(at)}>
      {formatTime(at)}
    </time>
  );
}
