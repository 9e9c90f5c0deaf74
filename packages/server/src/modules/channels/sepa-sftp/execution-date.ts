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
 * day, never for the day before.
 */

/** How the bank's day is told: its time zone, and its cut-off time there when it has one. */
export interface ExecutionCalendar {
  /** An IANA time zone (CET for the euro area: `Europe/Brussels`). */
  readonly timeZone: string;
  /** `HH:MM`, 24-hour, in `timeZone`: a file built at or after it is for the next business day. */
  readonly cutOff?: string | undefined;
}

/** One formatter per time zone: making one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar day and the minute of that day at instant `at` in `timeZone`. */
function localTime(at: Date, timeZone: string): { readonly day: Date; readonly minute: number } {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(at).map(({ type, value }) => [type, Number(value)]));
  return {
    day: new Date(Date.UTC(part.year as number, (part.month as number) - 1, part.day as number)),
    minute: (part.hour as number) * 60 + (part.minute as number),
  };
}

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
 * one when `at` is at or after its cut-off, then the first TARGET business day from there.
 */
export function requestedExecutionDate(at: Date, calendar: ExecutionCalendar): string {
  const { day, minute } = localTime(at, calendar.timeZone);
  let date = day;
  if (calendar.cutOff !== undefined) {
    const [hours, minutes] = calendar.cutOff.split(':').map(Number) as [number, number];
    if (minute >= hours * 60 + minutes) date = addDays(date, 1);
  }
  while (!isTargetDay(date)) date = addDays(date, 1);
  return date.toISOString().slice(0, 10);
}
