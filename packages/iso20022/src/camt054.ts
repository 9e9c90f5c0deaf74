/**
 * `camt.054.001.08`, the bank's debit/credit notification: entries booked (or pending) on the
 * account, each with its bank transaction code and, in `NtryDtls`, the transactions it books
 * with their references (or the batch it books as a whole). A returned SEPA credit transfer is a
 * `CRDT` entry with the code `PMNT`/`ICDT`/`RRTN` and the reason in `TxDtls/RtrInf/Rsn/Cd`; a
 * credit transfer received is `PMNT`/`RCDT`/… with its payer in `RltdPties` and its reference in
 * `RmtInf`. The entries are read and written by `camt.ts`, as the statement's (`camt.053`) are.
 *
 * ```text
 * Document/BkToCstmrDbtCdtNtfctn
 *   GrpHdr     MsgId, CreDtTm
 *   Ntfctn+    Id, CreDtTm?, Acct/Id/IBAN, Ntry* (camt.ts)
 * ```
 *
 * @module
 */
import { accountNode, type CamtEntry, CamtError, camtText35, entryNodes, readEntry } from './camt.js';
import { type Party } from './pain001.js';
import { type Element, ReadError, buildDocument, isoDateTime, readDateTime } from './xml.js';

/** The namespace of `camt.054.001.08`. */
export const CAMT_054_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.054.001.08';

/** A `camt.054` notification: every entry of every `Ntfctn`, in document order. */
export interface Camt054 {
  readonly kind: 'camt.054';
  /** `GrpHdr/MsgId`. */
  readonly msgId: string;
  /** `GrpHdr/CreDtTm`. */
  readonly createdAt: Date;
  readonly entries: readonly CamtEntry[];
}

/** What `writeCamt054` refuses (the same class as every camt writer's: {@link CamtError}). */
export const Camt054Error = CamtError;

/**
 * Writes a `camt.054.001.08` notification on `account` (`Ntfctn/Acct/Id/IBAN`, its owner's name
 * and its bank's BIC when given), valid against the ISO XSD: one `Ntfctn` whose `Id` is the
 * `msgId`, one `Ntry` per entry (`camt.ts`). Throws {@link CamtError} on an invalid IBAN, amount,
 * currency, code or date.
 */
export function writeCamt054(notification: Omit<Camt054, 'kind'> & { readonly account: Party }): string {
  if (Number.isNaN(notification.createdAt.getTime())) throw new CamtError('createdAt is not a valid date');
  const acct = accountNode(notification.account);
  const msgId = camtText35(notification.msgId, 'msgId') ?? '';
  const entries = entryNodes(notification.entries);
  return buildDocument(CAMT_054_NAMESPACE, {
    BkToCstmrDbtCdtNtfctn: {
      GrpHdr: { MsgId: msgId, CreDtTm: isoDateTime(notification.createdAt) },
      Ntfctn: {
        Id: msgId,
        CreDtTm: isoDateTime(notification.createdAt),
        Acct: acct,
        Ntry: entries.length === 0 ? undefined : entries,
      },
    },
  });
}

/** Reads `Document/BkToCstmrDbtCdtNtfctn`; throws {@link ReadError}. */
export function readCamt054(document: Element): Camt054 {
  const notification = document.one('BkToCstmrDbtCdtNtfctn');
  const header = notification.one('GrpHdr');
  const accounts = notification.all('Ntfctn');
  if (accounts.length === 0) throw new ReadError(`${notification.path}/Ntfctn is missing`);
  return {
    kind: 'camt.054',
    msgId: header.text('MsgId'),
    createdAt: readDateTime(header.text('CreDtTm', 40), `${header.path}/CreDtTm`),
    entries: accounts.flatMap((account) => {
      // An account named otherwise (Othr/Id) has no IBAN; its entries are still read.
      const iban = account.one('Acct').one('Id').optionalText('IBAN', 34);
      return account.all('Ntry').map((entry) => readEntry(entry, iban));
    }),
  };
}
