/**
 * Which Node.js lines the platform supports, and the one warning it logs at start on a line
 * past its end of life. The dates are the Node.js release schedule's
 * (https://github.com/nodejs/release#release-schedule); a line newer than the table is assumed
 * supported.
 */
const END_OF_LIFE: Readonly<Record<number, string>> = {
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
  26: '2029-04-30',
};
const OLDEST_LINE = Math.min(...Object.keys(END_OF_LIFE).map(Number));
const NEWEST_LINE = Math.max(...Object.keys(END_OF_LIFE).map(Number));

/** The supported lines the README names. */
export const SUPPORTED_NODE_LINES = '22, 24 or 26';

/**
 * The warning to log when `version` (`process.version`, e.g. `v20.19.1`) is a Node.js line past
 * its end of life on `today`, or `undefined` when the line is supported.
 */
export function nodeEndOfLifeWarning(version: string, today: Date): string | undefined {
  const match = /^v?(\d+)\./.exec(version);
  if (!match) return undefined;
  const line = Number(match[1]);
  if (line > NEWEST_LINE) return undefined;
  const endOfLife = line < OLDEST_LINE ? undefined : END_OF_LIFE[line];
  if (endOfLife !== undefined && today.toISOString().slice(0, 10) <= endOfLife) return undefined;
  const since = endOfLife === undefined ? '' : ` since ${endOfLife}`;
  return `Node.js ${version.replace(/^v?/, 'v')} is past its end of life${since} and gets no security fixes; run Paygate on Node.js ${SUPPORTED_NODE_LINES}`;
}
