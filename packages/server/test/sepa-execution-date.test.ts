/**
 * The pain.001's requested execution date (sepa-sftp/execution-date.ts): the bank's calendar day
 * in its time zone, the next one after its cut-off, rolled to a TARGET business day (weekends,
 * 1 January, Good Friday, Easter Monday, 1 May, 25 and 26 December closed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTimeZone } from '../src/channel-settings.js';
import {
  bankTime,
  easterSunday,
  isTargetDay,
  nextCutOff,
  requestedExecutionDate,
} from '../src/modules/channels/sepa-sftp/execution-date.js';
import { batchClose } from '../src/modules/channels/sepa-sftp/outbox.js';

const day = (date: string) => new Date(`${date}T00:00:00Z`);
const brussels = { timeZone: 'Europe/Brussels' };
const withCutOff = (...cutOffs: string[]) => ({ ...brussels, cutOffs });
const at = (instant: string, calendar: { timeZone: string; cutOffs?: string[] }) =>
  requestedExecutionDate(new Date(instant), calendar);
const ms = (instant: string) => new Date(instant).getTime();
const iso = (instant: number | undefined) => (instant === undefined ? undefined : new Date(instant).toISOString());

describe('the TARGET calendar', () => {
  it('Easter Sunday, Gregorian: known years, the earliest and the latest possible dates', () => {
    const known: [number, string][] = [
      [2000, '2000-04-23'],
      [2024, '2024-03-31'],
      [2025, '2025-04-20'],
      [2026, '2026-04-05'],
      [2027, '2027-03-28'],
      [2038, '2038-04-25'], // the latest possible
      [2285, '2285-03-22'], // the earliest possible
    ];
    for (const [year, date] of known) assert.equal(easterSunday(year).toISOString().slice(0, 10), date, String(year));
  });

  it('closed on weekends and the six holidays, open on the days around them', () => {
    const closed = [
      '2026-11-28', // Saturday
      '2026-11-29', // Sunday
      '2026-01-01', // New Year's Day
      '2026-04-03', // Good Friday
      '2026-04-06', // Easter Monday
      '2026-05-01', // Labour Day
      '2026-12-25',
      '2026-12-26',
      '2027-03-26', // Good Friday 2027
      '2027-03-29', // Easter Monday 2027
    ];
    const open = ['2026-11-27', '2026-11-30', '2026-04-02', '2026-04-07', '2026-12-24', '2026-12-28', '2026-12-31'];
    for (const date of closed) assert.equal(isTargetDay(day(date)), false, date);
    for (const date of open) assert.equal(isTargetDay(day(date)), true, date);
  });

  it('time zones are IANA names Node.js knows', () => {
    assert.equal(isTimeZone('Europe/Brussels'), true);
    assert.equal(isTimeZone('Europe/Helsinki'), true);
    assert.equal(isTimeZone('Mars/Olympus_Mons'), false);
    assert.equal(isTimeZone(''), false);
  });
});

describe('requestedExecutionDate', () => {
  it("is the bank's calendar day, not UTC's: 23:30 UTC on a Tuesday is Wednesday in Brussels and Helsinki", () => {
    assert.equal(at('2026-11-24T10:00:00Z', brussels), '2026-11-24');
    assert.equal(at('2026-11-24T23:30:00Z', brussels), '2026-11-25');
    assert.equal(at('2026-11-24T22:30:00Z', { timeZone: 'Europe/Helsinki' }), '2026-11-25');
    assert.equal(at('2026-11-24T22:30:00Z', brussels), '2026-11-24');
  });

  it('a file built at or after the cut-off asks for the next business day, in winter and in summer time', () => {
    // 15:00 in Brussels is 14:00 UTC in winter (CET) and 13:00 UTC in summer (CEST).
    assert.equal(at('2026-11-24T13:59:59Z', withCutOff('15:00')), '2026-11-24');
    assert.equal(at('2026-11-24T14:00:00Z', withCutOff('15:00')), '2026-11-25');
    assert.equal(at('2026-07-01T12:59:00Z', withCutOff('15:00')), '2026-07-01');
    assert.equal(at('2026-07-01T13:00:00Z', withCutOff('15:00')), '2026-07-02');
    // 00:00: every file is for the next business day.
    assert.equal(at('2026-11-24T10:00:00Z', withCutOff('00:00')), '2026-11-25');
  });

  it('rolls over weekends and holidays: Friday after the cut-off, Saturday, Easter, Christmas, New Year', () => {
    assert.equal(at('2026-11-27T15:00:00Z', withCutOff('15:00')), '2026-11-30'); // Friday 16:00 → Monday
    assert.equal(at('2026-11-28T09:00:00Z', brussels), '2026-11-30'); // Saturday → Monday
    assert.equal(at('2027-03-25T16:00:00Z', withCutOff('15:00')), '2027-03-30'); // → past Good Friday and Easter Monday
    assert.equal(at('2026-12-24T15:00:00Z', withCutOff('15:00')), '2026-12-28'); // → past Christmas and the weekend
    assert.equal(at('2026-12-31T15:00:00Z', withCutOff('15:00')), '2027-01-04'); // → past New Year and the weekend
    assert.equal(at('2026-04-30T15:00:00Z', withCutOff('14:00')), '2026-05-04'); // → past Labour Day (a Friday)
  });
});

describe('several cut-offs a day, and SEPA Instant', () => {
  it("only the day's last cut-off moves a file to the next business day", () => {
    const calendar = withCutOff('10:00', '15:00');
    assert.equal(at('2026-11-24T08:59:00Z', calendar), '2026-11-24'); // 09:59 in Brussels
    assert.equal(at('2026-11-24T09:30:00Z', calendar), '2026-11-24'); // between the two
    assert.equal(at('2026-11-24T14:00:00Z', calendar), '2026-11-25'); // at the last one
  });

  it('an instant file executes on the bank’s calendar day, weekends and holidays included', () => {
    assert.equal(requestedExecutionDate(new Date('2026-11-28T09:00:00Z'), withCutOff('15:00'), true), '2026-11-28');
    assert.equal(requestedExecutionDate(new Date('2026-12-25T23:30:00Z'), brussels, true), '2026-12-26');
  });

  it('the next cut-off: the first at or after the instant, on TARGET business days, in winter and in summer', () => {
    const calendar = withCutOff('10:00', '15:00');
    assert.equal(iso(nextCutOff(ms('2026-11-24T08:00:00Z'), calendar)), '2026-11-24T09:00:00.000Z');
    assert.equal(iso(nextCutOff(ms('2026-11-24T09:00:00Z'), calendar)), '2026-11-24T09:00:00.000Z'); // at it
    assert.equal(iso(nextCutOff(ms('2026-11-24T09:00:00.001Z'), calendar)), '2026-11-24T14:00:00.000Z');
    assert.equal(iso(nextCutOff(ms('2026-07-01T12:00:00Z'), calendar)), '2026-07-01T13:00:00.000Z'); // CEST
    // Friday after the last one → Monday's first; over Easter 2027 → the Tuesday.
    assert.equal(iso(nextCutOff(ms('2026-11-27T15:00:00Z'), calendar)), '2026-11-30T09:00:00.000Z');
    assert.equal(iso(nextCutOff(ms('2027-03-25T15:00:00Z'), calendar)), '2027-03-30T08:00:00.000Z');
    assert.equal(nextCutOff(ms('2026-11-24T08:00:00Z'), brussels), undefined);
    // The night of the switch to summer time (2026-03-29, 02:00 → 03:00): a Sunday, so Monday.
    assert.equal(iso(nextCutOff(ms('2026-03-28T23:00:00Z'), withCutOff('02:30'))), '2026-03-30T00:30:00.000Z');
    assert.equal(bankTime(ms('2026-11-24T14:00:00Z'), 'Europe/Brussels'), '2026-11-24 15:00 Europe/Brussels');
  });

  it('a batch closes batchEvery after it opened, at the next cut-off when sooner, or at once (instant)', () => {
    const settings = { batchEvery: 3_600_000, instant: false, timeZone: 'Europe/Brussels', cutOffs: ['15:00'] };
    assert.deepEqual(batchClose(ms('2026-11-24T10:00:00Z'), settings), {
      closesAt: ms('2026-11-24T11:00:00Z'),
      closedBy: 'batchEvery',
    });
    assert.deepEqual(batchClose(ms('2026-11-24T13:30:00Z'), settings), {
      closesAt: ms('2026-11-24T14:00:00Z'),
      closedBy: 'cutOff',
    });
    assert.deepEqual(batchClose(ms('2026-11-24T13:30:00.250Z'), { ...settings, instant: true }), {
      closesAt: ms('2026-11-24T13:30:00.250Z'),
      closedBy: 'instant',
    });
  });
});
