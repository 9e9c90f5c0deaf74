/**
 * The requested execution date a pain.001 asks for (`PmtInf/ReqdExctnDt/Dt`).
 *
 * A SEPA Credit Transfer executes on a TARGET business day: TARGET, the Eurosystem's settlement
 * system, is closed on Saturdays and Sundays, 1 January, Good Friday, Easter Monday, 1 May,
 * 25 and 26 December (the ECB's published closing days; the SCT rulebook's inter-bank business
 * days are TARGET's). Banks execute a file received before their daily cut-off on that day and a
 * later one on the next business day; a date in the past or on a closing day is rolled forward by
 * some banks and refused by others (pain.002 `DT01`). The date is the bank's: the calendar day in
 * its time zone, not UTC's, so a file built at 23:30 UTC (00:30 in Brussels) asks for the Brussels
 * day, never for the day before. A bank with several cut-offs a day (`cutOffs`) processes files at
 * each; only the day's last one moves a file to the next business day.
 */

/** How the bank's day is told: its time zone, and its cut-off times there. */
export interface ExecutionCalendar {
  /** An IANA time zone (CET for the euro area: `Europe/Brussels`). */
  readonly timeZone: string;
  /**
   * `HH:MM`, 24-hour, in `timeZone`, sorted: the times a business day's files are processed at. A
   * file built at or after the day's last one is for the next business day.
   */
  readonly cutOffs?: readonly string[] | undefined;
}

/** One formatter per time zone: making one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar day and the millisecond of that day at instant `at` in `timeZone`. */
function localTime(at: Date, timeZone: string): { readonly day: Date; readonly ms: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map(({ type, value }) => [type, Number(value)]));
  return {
    day: new Date(Date.UTC(part.year as number, (part.month as number) - 1, part.day as number)),
    ms:
      ((part.hour as number) * 3_600 + (part.minute as number) * 60 + (part.second as number)) * 1_000 +
      at.getUTCMilliseconds(),
  };
}

/** `HH:MM` as milliseconds of the day. */
const msOfDay = (time: string): number => {
  const [hours, minutes] = time.split(':').map(Number) as [number, number];
  return (hours * 60 + minutes) * 60_000;
};

/** Easter Sunday of `year` in the Gregorian calendar (the anonymous algorithm, Meeus's statement of it). */
export function easterSunday(year: number): Date {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return new Date(Date.UTC(year, month - 1, day));
}

const DAY_MS = 86_400_000;
const addDays = (day: Date, days: number) => new Date(day.getTime() + days * DAY_MS);

/** Whether TARGET is open on `day` (a UTC midnight standing for a calendar day). */
export function isTargetDay(day: Date): boolean {
  const weekday = day.getUTCDay();
  if (weekday === 0 || weekday === 6) return false;
  const month = day.getUTCMonth() + 1;
  const date = day.getUTCDate();
  if ((month === 1 && date === 1) || (month === 5 && date === 1) || (month === 12 && (date === 25 || date === 26))) {
    return false;
  }
  const easter = easterSunday(day.getUTCFullYear()).getTime();
  return day.getTime() !== easter - 2 * DAY_MS && day.getTime() !== easter + DAY_MS;
}

/**
 * The execution date (`YYYY-MM-DD`) for a file built at `at`: the bank's calendar day, the next
 * one when `at` is at or after the day's last cut-off, then the first TARGET business day from
 * there. A SEPA Instant file executes at once, any day of the year: its bank's calendar day
 * (`instant`), never rolled.
 */
export function requestedExecutionDate(at: Date, calendar: ExecutionCalendar, instant = false): string {
  const { day, ms } = localTime(at, calendar.timeZone);
  if (instant) return day.toISOString().slice(0, 10);
  let date = day;
  const last = calendar.cutOffs?.at(-1);
  if (last !== undefined && ms >= msOfDay(last)) date = addDays(date, 1);
  while (!isTargetDay(date)) date = addDays(date, 1);
  return date.toISOString().slice(0, 10);
}

/**
 * The instant of wall-clock time `ms` (of the day) on calendar day `day` in `timeZone`. A time
 * the clocks skip (the hour of the switch to summer time) is the instant an hour on.
 */
function instantOf(day: Date, ms: number, timeZone: string): number {
  const wall = day.getTime() + ms;
  // The zone's offset at a first guess, then at the instant that guess gives (they differ only
  // across a switch of the clocks).
  let instant = wall;
  for (let i = 0; i < 2; i++) {
    const local = localTime(new Date(instant), timeZone);
    const offset = local.day.getTime() + local.ms - instant;
    instant = wall - offset;
  }
  return instant;
}

/**
 * The first cut-off at or after `at`: the instant of one of `cutOffs` on a TARGET business day of
 * the bank's calendar (banks process files on business days only); undefined without cut-offs.
 */
export function nextCutOff(at: number, calendar: ExecutionCalendar): number | undefined {
  const times = calendar.cutOffs ?? [];
  if (times.length === 0) return undefined;
  let { day } = localTime(new Date(at), calendar.timeZone);
  // A week and the longest run of TARGET closing days (Easter) always hold a business day.
  for (let i = 0; i < 14; i++, day = addDays(day, 1)) {
    if (!isTargetDay(day)) continue;
    for (const time of times) {
      const instant = instantOf(day, msOfDay(time), calendar.timeZone);
      if (instant >= at) return instant;
    }
  }
  return undefined;
}

/** An instant as the bank's wall clock shows it: `2026-12-01 15:00 Europe/Brussels`. */
export function bankTime(at: number, timeZone: string): string {
  const { day, ms } = localTime(new Date(at), timeZone);
  const minutes = Math.floor(ms / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${day.toISOString().slice(0, 10)} ${hh}:${mm} ${timeZone}`;
}
