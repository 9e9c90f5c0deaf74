/**
 * Times as the merchant portal shows them, in one place another app (the back office) imports:
 * the date and time in the reader's locale and time zone, always with the zone's name
 * (`Dec 2, 2026, 2:10:05 PM GMT-3`), and the exact instant in UTC (ISO 8601) on hover and in the
 * `<time>` element's `dateTime`.
 */
import { LOCALE } from './format';

const dateTime = new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeStyle: 'long' });

/** Unix ms → the date and time in the reader's zone, with the zone's name. */
export const formatTime = (ms: number): string => dateTime.format(new Date(ms));

/** Unix ms → ISO 8601 in UTC (`2026-12-02T17:10:05.000Z`). */
export const isoTime = (ms: number): string => new Date(ms).toISOString();

/** The reader's time zone as the browser names it (`America/Sao_Paulo`), for hints. */
export const timeZone = (): string => dateTime.resolvedOptions().timeZone;

/** A time as text with its zone, the UTC instant on hover; a dash when there is none. */
export function Time({ ms }: { ms: number | undefined | null }) {
  if (ms === undefined || ms === null || !Number.isFinite(ms)) return <span className="muted">—</span>;
  const iso = isoTime(ms);
  return (
    <time dateTime={iso} title={`${iso} (UTC)`}>
      {formatTime(ms)}
    </time>
  );
}
