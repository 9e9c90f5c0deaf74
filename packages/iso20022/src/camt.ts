/**
 * What the bank's cash management messages share: the entries booked (or pending) on an account,
 * as `camt.054` notifications and `camt.053` statements both carry them (`ReportEntry10`), read
 * into the same records and written by the same code.
 *
 * ```text
 * Ntry*    Amt Ccy, CdtDbtInd, Sts/Cd, BookgDt/Dt|DtTm?, AcctSvcrRef?, BkTxCd/Domn(Cd, Fmly(Cd, SubFmlyCd))
 *   NtryDtls* Btch?    MsgId?, PmtInfId?, NbOfTxs?, TtlAmt Ccy?, CdtDbtInd?      (a batch booking)
 *             TxDtls*  Refs(MsgId?, AcctSvcrRef?, PmtInfId?, EndToEndId?), Amt Ccy?, BkTxCd?,
 *                      RltdPties(Dbtr/Pty/Nm?, DbtrAcct/Id/IBAN?), RmtInf(Ustrd*, Strd/CdtrRefInf/Ref each),
 *                      RtrInf/Rsn/Cd?
 * ```
 *
 * @module
 */
import { isPlainText, normalizeIban } from './text.js';
import { type BuildNode, type Element, ReadError, isIsoDate, readDateTime } from './xml.js';

/** An entry or a notification that cannot be written: `message` names the member and why. */
export class CamtError extends Error {
  override name = 'CamtError';
}

/** The related debtor of a transaction (`RltdPties`): who paid a credit received. */
export interface CamtParty {
  /** `Dbtr/Pty/Nm`. */
  readonly name?: string | undefined;
  /** `DbtrAcct/Id/IBAN`. */
  readonly iban?: string | undefined;
}

/** One transaction of an entry (`NtryDtls/TxDtls`). */
export interface CamtTransaction {
  /** `Refs/EndToEndId`: a payout's `orderNo`. */
  readonly endToEndId?: string | undefined;
  /** `Refs/AcctSvcrRef`: the bank's own reference (a return's `refundNo`). */
  readonly accountServicerRef?: string | undefined;
  /** `Refs/MsgId`: the `MsgId` of the file the transaction came in. */
  readonly msgId?: string | undefined;
  /** `Refs/PmtInfId`. */
  readonly paymentInformationId?: string | undefined;
  /** `Amt` as a decimal string. */
  readonly amount?: string | undefined;
  /** `Amt/@Ccy`. */
  readonly currency?: string | undefined;
  /** `BkTxCd/Domn` of the transaction, when it has one of its own. */
  readonly bankTransactionCode?: BankTransactionCode | undefined;
  /** `RltdPties`: the debtor of a credit received. */
  readonly debtor?: CamtParty | undefined;
  /** Every `RmtInf/Ustrd`, in order. */
  readonly unstructuredRemittance?: readonly string[] | undefined;
  /** Every `RmtInf/Strd/CdtrRefInf/Ref` (an ISO 11649 `RF…` creditor reference, for instance). */
  readonly creditorReferences?: readonly string[] | undefined;
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

/**
 * A batch an entry books as a whole (`NtryDtls/Btch`): the file (`MsgId`) and payment information
 * block (`PmtInfId`) it booked, with their count and total, and no transaction of its own.
 */
export interface CamtBatch {
  readonly msgId?: string | undefined;
  readonly paymentInformationId?: string | undefined;
  /** `NbOfTxs`. */
  readonly numberOfTransactions?: number | undefined;
  /** `TtlAmt` as a decimal string. */
  readonly totalAmount?: string | undefined;
  /** `TtlAmt/@Ccy`. */
  readonly currency?: string | undefined;
  /** `CdtDbtInd`. */
  readonly creditDebit?: 'CRDT' | 'DBIT' | undefined;
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
  /** The IBAN of the account (`Ntfctn` or `Stmt` `Acct/Id/IBAN`) holding the entry (read; not written: see `account`). */
  readonly accountIban?: string | undefined;
  /** `BookgDt/Dt` (or the date of `BookgDt/DtTm`). */
  readonly bookingDate?: string | undefined;
  /** `BookgDt/DtTm`, when the bank gave the time of the booking. */
  readonly bookedAt?: Date | undefined;
  /**
   * `Ntry/AcctSvcrRef`: the bank's reference of the entry. Some banks give it here rather than (or as
   * well as) in each transaction's `Refs/AcctSvcrRef`.
   */
  readonly accountServicerRef?: string | undefined;
  /** `BkTxCd/Domn`. */
  readonly bankTransactionCode?: BankTransactionCode | undefined;
  /** Every `NtryDtls/Btch`, in document order (read as `[]` when there is none). */
  readonly batches?: readonly CamtBatch[] | undefined;
  /** Every `NtryDtls/TxDtls`, in document order. */
  readonly transactions: readonly CamtTransaction[];
}

/** An `ActiveOrHistoricCurrencyAndAmount`: at most 18 digits, 5 of them decimals, not negative. */
export const CAMT_AMOUNT = /^[0-9]{1,13}(\.[0-9]{1,5})?$/;
const CURRENCY = /^[A-Z]{3}$/;

function amount(value: string, member: string): string {
  if (!CAMT_AMOUNT.test(value)) throw new CamtError(`${member} "${value}" is not a decimal amount`);
  return value;
}

function currency(value: string, member: string): string {
  if (!CURRENCY.test(value)) throw new CamtError(`${member} "${value}" is not a currency code`);
  return value;
}

/** A 1–4 character code (`ExternalBankTransactionDomain1Code` and the like). */
export function camtCode(value: string, member: string): string {
  if (!/^[A-Z0-9]{1,4}$/.test(value)) throw new CamtError(`${member} "${value}" is not a code of 1–4 characters`);
  return value;
}

/** A `Max35Text` identifier: 1–35 characters, no control character or surrounding space. */
export function camtText35(value: string | undefined, member: string): string | undefined {
  return camtText(value, member, 35);
}

function camtText(value: string | undefined, member: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (value.length < 1 || value.length > max || value.trim() !== value || !isPlainText(value)) {
    throw new CamtError(`${member} "${value}" must be 1–${max} characters, no control character or surrounding space`);
  }
  return value;
}

function iban(value: string, member: string): string {
  const normalized = normalizeIban(value);
  if (normalized === undefined) throw new CamtError(`${member} "${value}" is not a valid IBAN`);
  return normalized;
}

function codeNode(code: BankTransactionCode, at: string): BuildNode {
  return {
    Domn: {
      Cd: camtCode(code.domain, `${at}.domain`),
      Fmly: { Cd: camtCode(code.family, `${at}.family`), SubFmlyCd: camtCode(code.subFamily, `${at}.subFamily`) },
    },
  };
}

function transactionNode(tx: CamtTransaction, entryCurrency: string, at: string): BuildNode {
  const refs: BuildNode = {
    MsgId: camtText35(tx.msgId, `${at}.msgId`),
    AcctSvcrRef: camtText35(tx.accountServicerRef, `${at}.accountServicerRef`),
    PmtInfId: camtText35(tx.paymentInformationId, `${at}.paymentInformationId`),
    EndToEndId: camtText35(tx.endToEndId, `${at}.endToEndId`),
  };
  const debtor = tx.debtor;
  const debtorName = camtText(debtor?.name, `${at}.debtor.name`, 140);
  const unstructured = (tx.unstructuredRemittance ?? []).map((line, i) =>
    camtText(line, `${at}.unstructuredRemittance[${i}]`, 140),
  );
  const references = (tx.creditorReferences ?? []).map((ref, i) => ({
    // SCOR: a structured communication reference; its issuer ISO for an ISO 11649 one.
    CdtrRefInf: {
      Tp: { CdOrPrtry: { Cd: 'SCOR' }, Issr: /^RF/.test(ref) ? 'ISO' : undefined },
      Ref: camtText35(ref, `${at}.creditorReferences[${i}]`),
    },
  }));
  return {
    Refs: Object.values(refs).every((value) => value === undefined) ? undefined : refs,
    Amt:
      tx.amount === undefined
        ? undefined
        : {
            '@_Ccy': currency(tx.currency ?? entryCurrency, `${at}.currency`),
            '#text': amount(tx.amount, `${at}.amount`),
          },
    BkTxCd:
      tx.bankTransactionCode === undefined ? undefined : codeNode(tx.bankTransactionCode, `${at}.bankTransactionCode`),
    RltdPties:
      debtorName === undefined && debtor?.iban === undefined
        ? undefined
        : {
            Dbtr: debtorName === undefined ? undefined : { Pty: { Nm: debtorName } },
            DbtrAcct: debtor?.iban === undefined ? undefined : { Id: { IBAN: iban(debtor.iban, `${at}.debtor.iban`) } },
          },
    RmtInf:
      unstructured.length === 0 && references.length === 0
        ? undefined
        : {
            Ustrd:
              unstructured.length === 0 ? undefined : (unstructured as string[]).map((line) => ({ '#text': line })),
            Strd: references.length === 0 ? undefined : references,
          },
    RtrInf:
      tx.returnReason === undefined ? undefined : { Rsn: { Cd: camtCode(tx.returnReason, `${at}.returnReason`) } },
  };
}

function batchNode(batch: CamtBatch, entryCurrency: string, at: string): BuildNode {
  const count = batch.numberOfTransactions;
  if (count !== undefined && (!Number.isSafeInteger(count) || count < 0)) {
    throw new CamtError(`${at}.numberOfTransactions ${count} is not a count`);
  }
  return {
    MsgId: camtText35(batch.msgId, `${at}.msgId`),
    PmtInfId: camtText35(batch.paymentInformationId, `${at}.paymentInformationId`),
    NbOfTxs: count === undefined ? undefined : String(count),
    TtlAmt:
      batch.totalAmount === undefined
        ? undefined
        : {
            '@_Ccy': currency(batch.currency ?? entryCurrency, `${at}.currency`),
            '#text': amount(batch.totalAmount, `${at}.totalAmount`),
          },
    CdtDbtInd: batch.creditDebit,
  };
}

/**
 * The `Ntry` elements of `entries`, valid against the camt.053/054 XSDs: one `NtryDtls` per
 * batch (its `Btch`) and one more holding the transactions. A transaction's amount without a
 * currency is written in its entry's currency. Throws {@link CamtError} on an invalid IBAN,
 * amount, currency, code or date.
 */
export function entryNodes(entries: readonly CamtEntry[]): BuildNode[] {
  return entries.map((entry, index) => {
    const at = `entries[${index}]`;
    if (entry.creditDebit !== 'CRDT' && entry.creditDebit !== 'DBIT') {
      throw new CamtError(`${at}.creditDebit "${String(entry.creditDebit)}" is not CRDT or DBIT`);
    }
    if (entry.bookingDate !== undefined && !isIsoDate(entry.bookingDate)) {
      throw new CamtError(`${at}.bookingDate "${entry.bookingDate}" is not a YYYY-MM-DD date`);
    }
    if (entry.bookedAt !== undefined && Number.isNaN(entry.bookedAt.getTime())) {
      throw new CamtError(`${at}.bookedAt is not a valid date`);
    }
    const entryCurrency = currency(entry.currency, `${at}.currency`);
    const code4 = entry.bankTransactionCode;
    const transactions = entry.transactions.map((tx, i) =>
      transactionNode(tx, entryCurrency, `${at}.transactions[${i}]`),
    );
    const details: BuildNode[] = (entry.batches ?? []).map((batch, i) => ({
      Btch: batchNode(batch, entryCurrency, `${at}.batches[${i}]`),
    }));
    if (transactions.length > 0) details.push({ TxDtls: transactions });
    return {
      Amt: { '@_Ccy': entryCurrency, '#text': amount(entry.amount, `${at}.amount`) },
      CdtDbtInd: entry.creditDebit,
      Sts: { Cd: camtCode(entry.status, `${at}.status`) },
      BookgDt:
        entry.bookedAt !== undefined
          ? { DtTm: entry.bookedAt.toISOString().replace(/\.\d{3}Z$/, 'Z') }
          : entry.bookingDate === undefined
            ? undefined
            : { Dt: entry.bookingDate },
      AcctSvcrRef: camtText35(entry.accountServicerRef, `${at}.accountServicerRef`),
      // BkTxCd is required by the XSD; both of its members are optional.
      BkTxCd: code4 === undefined ? {} : codeNode(code4, `${at}.bankTransactionCode`),
      NtryDtls: details.length === 0 ? undefined : details,
    };
  });
}

/** The account node (`Acct`) of a notification or statement: its IBAN, its owner's name, its bank's BIC. */
export function accountNode(account: {
  readonly name: string;
  readonly iban: string;
  readonly bic?: string | undefined;
}): BuildNode {
  const accountIban = iban(account.iban, 'account.iban');
  const ownerName = account.name.trim();
  if (ownerName.length > 140 || !isPlainText(ownerName)) {
    throw new CamtError('account.name must be at most 140 characters, no control character');
  }
  const bic = account.bic;
  if (bic !== undefined && !/^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) {
    throw new CamtError(`account.bic "${bic}" is not a BIC`);
  }
  return {
    Id: { IBAN: accountIban },
    Ownr: ownerName === '' ? undefined : { Nm: ownerName },
    Svcr: bic === undefined ? undefined : { FinInstnId: { BICFI: bic } },
  };
}

/** Reads an amount leaf with its currency. */
export function readCamtAmount(element: Element, name: string): { amount: string; currency: string } {
  const leaf = element.leaf(name, 20);
  if (!CAMT_AMOUNT.test(leaf.text)) throw new ReadError(`${leaf.path} "${leaf.text}" is not an amount`);
  const ccy = leaf.attributes['Ccy'];
  if (ccy === undefined || !CURRENCY.test(ccy)) throw new ReadError(`${leaf.path}/@Ccy is missing or not a currency`);
  return { amount: leaf.text, currency: ccy };
}

function readCode(element: Element | undefined): BankTransactionCode | undefined {
  const domain = element?.optional('Domn');
  const family = domain?.one('Fmly');
  if (domain === undefined || family === undefined) return undefined;
  return { domain: domain.text('Cd', 4), family: family.text('Cd', 4), subFamily: family.text('SubFmlyCd', 4) };
}

function readCreditDebit(element: Element, name: string): 'CRDT' | 'DBIT' {
  const value = element.text(name, 4);
  if (value !== 'CRDT' && value !== 'DBIT')
    throw new ReadError(`${element.path}/${name} "${value}" is not CRDT or DBIT`);
  return value;
}

function readTransaction(tx: Element): CamtTransaction {
  const refs = tx.optional('Refs');
  const amt = tx.optionalLeaf('Amt', 20) === undefined ? undefined : readCamtAmount(tx, 'Amt');
  const parties = tx.optional('RltdPties');
  const debtorName = parties?.optional('Dbtr')?.optional('Pty')?.optionalText('Nm', 140);
  const debtorIban = parties?.optional('DbtrAcct')?.optional('Id')?.optionalText('IBAN', 34);
  const remittance = tx.optional('RmtInf');
  const unstructured = remittance?.texts('Ustrd', 140) ?? [];
  const references =
    remittance?.all('Strd').flatMap((strd) => {
      const ref = strd.optional('CdtrRefInf')?.optionalText('Ref');
      return ref === undefined ? [] : [ref];
    }) ?? [];
  return {
    endToEndId: refs?.optionalText('EndToEndId'),
    accountServicerRef: refs?.optionalText('AcctSvcrRef'),
    msgId: refs?.optionalText('MsgId'),
    paymentInformationId: refs?.optionalText('PmtInfId'),
    amount: amt?.amount,
    currency: amt?.currency,
    bankTransactionCode: readCode(tx.optional('BkTxCd')),
    debtor: debtorName === undefined && debtorIban === undefined ? undefined : { name: debtorName, iban: debtorIban },
    unstructuredRemittance: unstructured.length === 0 ? undefined : unstructured,
    creditorReferences: references.length === 0 ? undefined : references,
    returnReason: tx.optional('RtrInf')?.optional('Rsn')?.optionalText('Cd', 4),
  };
}

function readBatch(batch: Element): CamtBatch {
  const count = batch.optionalText('NbOfTxs', 15);
  if (count !== undefined && !/^[0-9]{1,15}$/.test(count)) {
    throw new ReadError(`${batch.path}/NbOfTxs "${count}" is not a count`);
  }
  const total = batch.optionalLeaf('TtlAmt', 20) === undefined ? undefined : readCamtAmount(batch, 'TtlAmt');
  return {
    msgId: batch.optionalText('MsgId'),
    paymentInformationId: batch.optionalText('PmtInfId'),
    numberOfTransactions: count === undefined ? undefined : Number(count),
    totalAmount: total?.amount,
    currency: total?.currency,
    creditDebit: batch.optionalLeaf('CdtDbtInd', 4) === undefined ? undefined : readCreditDebit(batch, 'CdtDbtInd'),
  };
}

/** Reads a `DateAndDateTime2Choice` (`Dt` or `DtTm`) into its date and, for `DtTm`, its instant. */
export function readDateChoice(element: Element): { date: string; at?: Date } {
  const date = element.optionalText('Dt', 10);
  const dateTime = element.optionalText('DtTm', 40);
  if (date !== undefined) {
    if (!isIsoDate(date)) throw new ReadError(`${element.path}/Dt "${date}" is not a date`);
    return { date };
  }
  if (dateTime !== undefined) {
    const at = readDateTime(dateTime, `${element.path}/DtTm`);
    return { date: at.toISOString().slice(0, 10), at };
  }
  throw new ReadError(`${element.path} holds neither Dt nor DtTm`);
}

/** Reads one `Ntry` of an account whose IBAN is `accountIban`; throws {@link ReadError}. */
export function readEntry(entry: Element, accountIban: string | undefined): CamtEntry {
  const { amount: entryAmount, currency: entryCurrency } = readCamtAmount(entry, 'Amt');
  const booking = entry.optional('BookgDt');
  const booked = booking === undefined ? undefined : readDateChoice(booking);
  const details = entry.all('NtryDtls');
  return {
    status: entry.one('Sts').text('Cd', 4),
    creditDebit: readCreditDebit(entry, 'CdtDbtInd'),
    amount: entryAmount,
    currency: entryCurrency,
    accountIban,
    bookingDate: booked?.date,
    bookedAt: booked?.at,
    accountServicerRef: entry.optionalText('AcctSvcrRef'),
    bankTransactionCode: readCode(entry.optional('BkTxCd')),
    batches: details.flatMap((detail) => {
      const batch = detail.optional('Btch');
      return batch === undefined ? [] : [readBatch(batch)];
    }),
    transactions: details.flatMap((detail) => detail.all('TxDtls').map(readTransaction)),
  };
}
