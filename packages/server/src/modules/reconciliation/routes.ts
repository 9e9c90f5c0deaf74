import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../errors.js';
import { success } from '../../http/errors.js';
import { parseInput } from '../../validation.js';
import type { ChannelServices } from '../channels/apply.js';
import {
  dayOf,
  reconcile,
  reconcileReceipts,
  readSettlementText,
  type ReconcileReport,
  settlementDate,
  type SettlementFile,
} from './service.js';

/** POST /admin/v1/reconciliation */
const reconcileInput = z.strictObject({
  channel: z.string().min(1).max(64),
  /** The settlement file's text (CSV or a camt.054); without it, the channel's own list of the day. */
  file: z.string().max(900_000).optional(),
  /** The file's name, whose YYYY-MM-DD (if any) is the day when `date` is not given. */
  fileName: z.string().max(255).optional(),
  date: z.string().optional(),
});

const refused = (field: string, message: string) => new DomainError('VALIDATION_FAILED', message, [{ field, message }]);

/**
 * `POST /admin/v1/reconciliation` (`paygate reconcile` while the server owns its embedded data
 * directory): the channel's settlement file, sent as text, compared with the books; the day is
 * `date`, else the file name's, else the camt.054's own booking date. Without a file, the
 * channel's own list of the day's received payments is asked (a kind that has one). Answers the
 * report the command prints.
 */
export function reconciliationAdminRoutes(admin: FastifyInstance, services: ChannelServices): void {
  admin.post('/reconciliation', async (request) => {
    const input = parseInput(reconcileInput, request.body);
    let settlement: SettlementFile | undefined;
    if (input.file !== undefined) {
      try {
        settlement = readSettlementText(input.file);
      } catch (error) {
        throw refused('file', `${input.fileName ?? 'the file'}: ${(error as Error).message}`);
      }
    }
    let date: string;
    let day: { from: number; to: number };
    try {
      date = settlement
        ? settlementDate(input.date, input.fileName, settlement)
        : (input.date ?? settlementDate(undefined, undefined, { bookingDates: [] }));
      day = dayOf(date);
    } catch (error) {
      throw refused('date', (error as Error).message);
    }
    let report: ReconcileReport;
    if (settlement) {
      report = await reconcile(services.db, input.channel, date, settlement.lines, settlement.booked);
    } else {
      const connector = services.channels.get(input.channel);
      if (!connector?.receivedBetween) {
        throw refused(
          'file',
          `give --file: ${connector ? `the ${connector.kind} channel ${input.channel} has no list of received payments` : `no channel ${input.channel} in PAYGATE_CHANNELS`}`,
        );
      }
      const receipts = await connector.receivedBetween(day.from, day.to);
      report = await reconcileReceipts(services.db, input.channel, date, receipts);
    }
    return success(report);
  });
}
