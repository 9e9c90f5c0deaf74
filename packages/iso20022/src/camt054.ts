/**
 * `camt.054.001.08`, the bank's debit/credit notification: entries booked (or pending) on the
 * account, each with its bank transaction code and, in `NtryDtls/TxDtls`, the transactions it
 * books with their references. A returned SEPA credit transfer is a `CRDT` entry with the code
 * `PMNT`/`ICDT`/`RRTN` and the reason in `TxDtls/RtrInf/Rsn/Cd`.
 *
 * ```text
 * Document/BkToCstmrDbtCdtNtfctn
 *   GrpHdr     MsgId, CreDtTm
 *   Ntfctn+    Id, CreDtTm?, Acct/Id/IBAN
 *     Ntry*    Amt Ccy, CdtDbtInd, Sts/Cd, BookgDt/Dt?, AcctSvcrRef?, BkTxCd/Domn(Cd, Fmly(Cd, SubFmlyCd))
 *       NtryDtls/TxDtls (any number of each): Refs(AcctSvcrRef?, EndToEndId?), Amt Ccy?, RtrInf/Rsn/Cd?
 * ```
 *
 * @module
 */
import { type Party } from './pain001.js';
import { isPlainText, normalizeIban } from './text.js';
import { type BuildNode, type Element, ReadError, buildDocument, isIsoDate, isoDateTime, readDateTime } from './xml.js';

/** The namespace of `camt.054.001.08`. */
export const CAMT_054_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.054.001.08';

/** One transaction of an entry (`NtryDtls/TxDtls`). */
export interface CamtTransaction {
  /** `Refs/EndToEndId`: the payout's `orderNo`. */
  readonly endToEndId?: string | undefined;
  /** `Refs/AcctSvcrRef`: the bank's own reference (a return's `refundNo`). */
  readonly accountServicerRef?: string | undefined;
  /** `Amt` as a decimal string. */
  readonly amount?: string | undefined;
  /** `Amt/@Ccy`. */
  readonly currency?: string | undefined;
  /** `RtrInf/Rsn/Cd`: why a transfer came back (`AC04`, …). */
  readonly returnReason?: string | undefined;
}

/** A bank transaction code's domain part (`BkTxCd/Domn`): `PMNT`/`ICDT`/`RRTN` for a returned credit transfer. */
export interface BankTransactionCode {
  /** `Domn/Cd`. */
  readonly domain: string;
  /** `Domn/Fmly/Cd`. */
  readonly family: string;
  /** `Domn/Fmly/SubFmlyCd`. */
  readonly subFamily: string;
}

/** One entry on the account (`Ntry`). */
export interface CamtEntry {
  /** `Sts/Cd`: `BOOK`, `PDNG`, `INFO`, … */
  readonly status: string;
  /** `CdtDbtInd`. */
  readonly creditDebit: 'CRDT' | 'DBIT';
  /** `Amt` as a decimal string. */
  readonly amount: string;
  /** `Amt/@Ccy`. */
  readonly currency: string;
  /** `Ntfctn/Acct/Id/IBAN` of the notification holding the entry (read; not written: see `account`). */
  readonly accountIban?: string | undefined;
  /** `BookgDt/Dt` (or the date of `BookgDt/DtTm`). */
  readonly bookingDate?: string | undefined;
  /**
   * `Ntry/AcctSvcrRef`: the bank's reference of the entry. Some banks give it here rather than (or as
   * well as) in each transaction's `Refs/AcctSvcrRef`.
   */
  readonly accountServicerRef?: string | undefined;
  /** `BkTxCd/Domn`. */
  readonly bankTransactionCode?: BankTransactionCode | undefined;
  /** Every `NtryDtls/TxDtls`, in document order. */
  readonly transactions: readonly CamtTransaction[];
}

/** A `camt.054` notification: every entry of every `Ntfctn`, in document order. */
export interface Camt054 {
  readonly kind: 'camt.054';
  /** `GrpHdr/MsgId`. */
  readonly msgId: string;
  /** `GrpHdr/CreDtTm`. */
  readonly createdAt: Date;
  readonly entries: readonly CamtEntry[];
}

/** A notification that cannot be written: `message` names the member and why. */
export class Camt054Error extends Error {
  override name = 'Camt054Error';
}

/** An `ActiveOrHistoricCurrencyAndAmount`: at most 18 digits, 5 of them decimals, not negative. */
const AMOUNT = /^[0-9]{1,13}(\.[0-9]{1,5})?$/;
const CURRENCY = /^[A-Z]{3}$/;

function amount(value: string, member: string): string {
  if (!AMOUNT.test(value)) throw new Camt054Error(`${member} "${value}" is not a decimal amount`);
  return value;
}

function currency(value: string, member: string): string {
  if (!CURRENCY.test(value)) throw new Camt054Error(`${member} "${value}" is not a currency code`);
  return value;
}

function code(value: string, member: string): string {
  if (!/^[A-Z0-9]{1,4}$/.test(value)) throw new Camt054Error(`${member} "${value}" is not a code of 1–4 characters`);
  return value;
}

function text35(value: string | undefined, member: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.length < 1 || value.length > 35 || value.trim() !== value || !isPlainText(value)) {
    throw new Camt054Error(`${member} "${value}" must be 1–35 characters, no control character or surrounding space`);
  }
  return value;
}

/**
 * Writes a `camt.054.001.08` notification on `account` (`Ntfctn/Acct/Id/IBAN`, its owner's name
 * and its bank's BIC when given), valid against the ISO XSD: one `Ntfctn` whose `Id` is the
 * `msgId`, one `Ntry` per entry with one `NtryDtls` holding its transactions. A transaction's
 * amount without a currency is written in its entry's currency. Throws {@link Camt054Error} on an
 * invalid IBAN, amount, currency, code or date.
 */
export function writeCamt054(notification: Omit<Camt054, 'kind'> & { readonly account: Party }): string {
  if (Number.isNaN(notification.createdAt.getTime())) throw new Camt054Error('createdAt is not a valid date');
  const iban = normalizeIban(notification.account.iban);
  if (iban === undefined) throw new Camt054Error(`account.iban "${notification.account.iban}" is not a valid IBAN`);
  const ownerName = notification.account.name.trim();
  if (ownerName.length > 140 || !isPlainText(ownerName)) {
    throw new Camt054Error('account.name must be at most 140 characters, no control character');
  }
  const msgId = text35(notification.msgId, 'msgId') ?? '';
  const entries: BuildNode[] = notification.entries.map((entry, index) => {
    const at = `entries[${index}]`;
    if (entry.creditDebit !== 'CRDT' && entry.creditDebit !== 'DBIT') {
      throw new Camt054Error(`${at}.creditDebit "${String(entry.creditDebit)}" is not CRDT or DBIT`);
    }
    if (entry.bookingDate !== undefined && !isIsoDate(entry.bookingDate)) {
      throw new Camt054Error(`${at}.bookingDate "${entry.bookingDate}" is not a YYYY-MM-DD date`);
    }
    const entryCurrency = currency(entry.currency, `${at}.currency`);
    const code4 = entry.bankTransactionCode;
    const transactions: BuildNode[] = entry.transactions.map((tx, txIndex) => {
      const txAt = `${at}.transactions[${txIndex}]`;
      const refs: BuildNode = {
        AcctSvcrRef: text35(tx.accountServicerRef, `${txAt}.accountServicerRef`),
        EndToEndId: text35(tx.endToEndId, `${txAt}.endToEndId`),
      };
      return {
        Refs: refs.AcctSvcrRef === undefined && refs.EndToEndId === undefined ? undefined : refs,
        Amt:
          tx.amount === undefined
            ? undefined
            : {
                '@_Ccy': currency(tx.currency ?? entryCurrency, `${txAt}.currency`),
                '#text': amount(tx.amount, `${txAt}.amount`),
              },
        RtrInf:
          tx.returnReason === undefined ? undefined : { Rsn: { Cd: code(tx.returnReason, `${txAt}.returnReason`) } },
      };
    });
    return {
      Amt: { '@_Ccy': entryCurrency, '#text': amount(entry.amount, `${at}.amount`) },
      CdtDbtInd: entry.creditDebit,
      Sts: { Cd: code(entry.status, `${at}.status`) },
      BookgDt: entry.bookingDate === undefined ? undefined : { Dt: entry.bookingDate },
      AcctSvcrRef: text35(entry.accountServicerRef, `${at}.accountServicerRef`),
      // BkTxCd is required by the XSD; both of its members are optional.
      BkTxCd:
        code4 === undefined
          ? {}
          : {
              Domn: {
                Cd: code(code4.domain, `${at}.bankTransactionCode.domain`),
                Fmly: {
                  Cd: code(code4.family, `${at}.bankTransactionCode.family`),
                  SubFmlyCd: code(code4.subFamily, `${at}.bankTransactionCode.subFamily`),
                },
              },
            },
      NtryDtls: transactions.length === 0 ? undefined : { TxDtls: transactions },
    };
  });
  const bic = notification.account.bic;
  if (bic !== undefined && !/^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) {
    throw new Camt054Error(`account.bic "${bic}" is not a BIC`);
  }
  return buildDocument(CAMT_054_NAMESPACE, {
    BkToCstmrDbtCdtNtfctn: {
      GrpHdr: { MsgId: msgId, CreDtTm: isoDateTime(notification.createdAt) },
      Ntfctn: {
        Id: msgId,
        CreDtTm: isoDateTime(notification.createdAt),
        Acct: {
          Id: { IBAN: iban },
          Ownr: ownerName === '' ? undefined : { Nm: ownerName },
          Svcr: bic === undefined ? undefined : { FinInstnId: { BICFI: bic } },
        },
        Ntry: entries.length === 0 ? undefined : entries,
      },
    },
  });
}

function readAmount(element: Element, name: string): { amount: string; currency: string } {
  const leaf = element.leaf(name, 20);
  if (!AMOUNT.test(leaf.text)) throw new ReadError(`${leaf.path} "${leaf.text}" is not an amount`);
  const ccy = leaf.attributes['Ccy'];
  if (ccy === undefined || !CURRENCY.test(ccy)) throw new ReadError(`${leaf.path}/@Ccy is missing or not a currency`);
  return { amount: leaf.text, currency: ccy };
}

function readTransaction(tx: Element): CamtTransaction {
  const refs = tx.optional('Refs');
  const amt = tx.optionalLeaf('Amt', 20) === undefined ? undefined : readAmount(tx, 'Amt');
  return {
    endToEndId: refs?.optionalText('EndToEndId'),
    accountServicerRef: refs?.optionalText('AcctSvcrRef'),
    amount: amt?.amount,
    currency: amt?.currency,
    returnReason: tx.optional('RtrInf')?.optional('Rsn')?.optionalText('Cd', 4),
  };
}

function readEntry(entry: Element, accountIban: string | undefined): CamtEntry {
  const { amount: entryAmount, currency: entryCurrency } = readAmount(entry, 'Amt');
  const creditDebit = entry.text('CdtDbtInd', 4);
  if (creditDebit !== 'CRDT' && creditDebit !== 'DBIT') {
    throw new ReadError(`${entry.path}/CdtDbtInd "${creditDebit}" is not CRDT or DBIT`);
  }
  const booking = entry.optional('BookgDt');
  let bookingDate: string | undefined;
  if (booking !== undefined) {
    const date = booking.optionalText('Dt', 10);
    const dateTime = booking.optionalText('DtTm', 40);
    if (date !== undefined) {
      if (!isIsoDate(date)) throw new ReadError(`${booking.path}/Dt "${date}" is not a date`);
      bookingDate = date;
    } else if (dateTime !== undefined) {
      bookingDate = readDateTime(dateTime, `${booking.path}/DtTm`).toISOString().slice(0, 10);
    } else {
      throw new ReadError(`${booking.path} holds neither Dt nor DtTm`);
    }
  }
  const domain = entry.optional('BkTxCd')?.optional('Domn');
  const family = domain?.one('Fmly');
  return {
    status: entry.one('Sts').text('Cd', 4),
    creditDebit,
    amount: entryAmount,
    currency: entryCurrency,
    accountIban,
    bookingDate,
    accountServicerRef: entry.optionalText('AcctSvcrRef'),
    bankTransactionCode:
      domain === undefined || family === undefined
        ? undefined
        : { domain: domain.text('Cd', 4), family: family.text('Cd', 4), subFamily: family.text('SubFmlyCd', 4) },
    transactions: entry.all('NtryDtls').flatMap((details) => details.all('TxDtls').map(readTransaction)),
  };
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
