/**
 * Every time the back office shows goes through `Time`: the portal's shared one (`../time`: the
 * reader's locale and zone, with the zone's name, the UTC instant on hover), which also takes the
 * ISO strings some back-office answers carry.
 */
import { Time as SharedTime } from '../time';

export function Time({ ms }: { ms: number | string | undefined | null }) {
  const at = typeof ms === 'string' ? Date.parse(ms) : ms;
  return <SharedTime ms={at} />;
}
