/**
 * `camt.053.001.08`, the bank's account statement (usually one a day, "end of day"): the
 * account's opening and closing balances and every entry booked on it in the period, with the
 * same `Ntry` elements as the `camt.054` notification (`camt.ts`). Many banks send statements
 * only, or notifications for some accounts only: the statement is where every booking and return
 * appears, and one seen in a notification appears here again.
 *
 * ```text
 * Document/BkToCstmrStmt
 *   GrpHdr   MsgId, CreDtTm
 *   Stmt+    Id, ElctrncSeqNb?, CreDtTm?, FrToDt(FrDtTm, ToDtTm)?, Acct/Id/IBAN,
 *            Bal+ (Tp/CdOrPrtry/Cd OPBD|CLBD|…, Amt Ccy, CdtDbtInd, Dt/Dt|DtTm), Ntry* (camt.ts)
 * ```
 *
 * @module
 */
import {
  accountNode,
  type CamtEntry,
  CamtError,
  camtCode,
  camtText35,
  entryNodes,
  readCamtAmount,
  readDateChoice,
  readEntry,
} from './camt.js';
import { type Party } from './pain001.js';
import { type BuildNode, type Element, ReadError, buildDocument, isIsoDate, isoDateTime, readDateTime } from './xml.js';

/** The namespace of `camt.053.001.08`. */
export const CAMT_053_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';

/** A balance of a statement (`Bal`): `OPBD` the opening booked balance, `CLBD` the closing one. */
export interface CamtBalance {
  /** `Tp/CdOrPrtry/Cd`: `OPBD`, `CLBD`, `CLAV`, `ITBD`, … */
  readonly type: string;
  /** `Amt`, a decimal string, never negative: the sign is `creditDebit`. */
  readonly amount: string;
  readonly currency: string;
  /** `CdtDbtInd`: `CRDT` for a balance in the customer's favour, `DBIT` for an overdraft. */
  readonly creditDebit: 'CRDT' | 'DBIT';
  /** `Dt/Dt`. */
  readonly date: string;
}

/** One account's statement (`Stmt`). */
export interface CamtStatement {
  /** `Stmt/Id`. */
  readonly id: string;
  /** `ElctrncSeqNb`: the statement's number in the account's sequence. */
  readonly sequenceNumber?: number | undefined;
  /** `Acct/Id/IBAN`. */
  readonly accountIban?: string | undefined;
  /** `FrToDt`: the period the statement covers. */
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  readonly balances: readonly CamtBalance[];
}

/** A `camt.053` statement: every statement's balances, and every entry of every statement in document order. */
export interface Camt053 {
  readonly kind: 'camt.053';
  /** `GrpHdr/MsgId`. */
  readonly msgId: string;
  /** `GrpHdr/CreDtTm`. */
  readonly createdAt: Date;
  readonly statements: readonly CamtStatement[];
  readonly entries: readonly CamtEntry[];
}

/** What `writeCamt053` takes: one statement of `account`. */
export interface Camt053Input {
  readonly msgId: string;
  readonly createdAt: Date;
  readonly account: Party;
  /** `Stmt/Id`; the `msgId` when not given. */
  readonly statementId?: string | undefined;
  readonly sequenceNumber?: number | undefined;
  readonly from?: Date | undefined;
  readonly to?: Date | undefined;
  /** At least one (the XSD's `Bal+`): an opening and a closing balance, as banks write them. */
  readonly balances: readonly CamtBalance[];
  readonly entries: readonly CamtEntry[];
}

function balanceNode(balance: CamtBalance, at: string): BuildNode {
  if (!/^[0-9]{1,13}(\.[0-9]{1,5})?$/.test(balance.amount)) {
    throw new CamtError(`${at}.amount "${balance.amount}" is not a decimal amount (the sign is creditDebit)`);
  }
  if (!/^[A-Z]{3}$/.test(balance.currency))
    throw new CamtError(`${at}.currency "${balance.currency}" is not a currency code`);
  if (balance.creditDebit !== 'CRDT' && balance.creditDebit !== 'DBIT') {
    throw new CamtError(`${at}.creditDebit "${String(balance.creditDebit)}" is not CRDT or DBIT`);
  }
  if (!isIsoDate(balance.date)) throw new CamtError(`${at}.date "${balance.date}" is not a YYYY-MM-DD date`);
  return {
    Tp: { CdOrPrtry: { Cd: camtCode(balance.type, `${at}.type`) } },
    Amt: { '@_Ccy': balance.currency, '#text': balance.amount },
    CdtDbtInd: balance.creditDebit,
    Dt: { Dt: balance.date },
  };
}

/**
 * Writes a `camt.053.001.08` statement of `account`, valid against ISO's XSD: one `Stmt` with its
 * balances (at least one) and one `Ntry` per entry (`camt.ts`). Throws {@link CamtError} on an
 * invalid IBAN, amount, currency, code or date, or without a balance.
 */
export function writeCamt053(statement: Camt053Input): string {
  if (Number.isNaN(statement.createdAt.getTime())) throw new CamtError('createdAt is not a valid date');
  if (statement.balances.length === 0) throw new CamtError('a statement needs at least one balance');
  const acct = accountNode(statement.account);
  const msgId = camtText35(statement.msgId, 'msgId') ?? '';
  const sequence = statement.sequenceNumber;
  if (sequence !== undefined && (!Number.isSafeInteger(sequence) || sequence < 0)) {
    throw new CamtError(`sequenceNumber ${sequence} is not a whole number`);
  }
  for (const [name, at] of [
    ['from', statement.from],
    ['to', statement.to],
  ] as const) {
    if (at !== undefined && Number.isNaN(at.getTime())) throw new CamtError(`${name} is not a valid date`);
  }
  if ((statement.from === undefined) !== (statement.to === undefined))
    throw new CamtError('give both from and to, or neither');
  const entries = entryNodes(statement.entries);
  return buildDocument(CAMT_053_NAMESPACE, {
    BkToCstmrStmt: {
      GrpHdr: { MsgId: msgId, CreDtTm: isoDateTime(statement.createdAt) },
      Stmt: {
        Id: camtText35(statement.statementId ?? msgId, 'statementId') ?? msgId,
        ElctrncSeqNb: sequence === undefined ? undefined : String(sequence),
        CreDtTm: isoDateTime(statement.createdAt),
        FrToDt:
          statement.from === undefined || statement.to === undefined
            ? undefined
            : { FrDtTm: isoDateTime(statement.from), ToDtTm: isoDateTime(statement.to) },
        Acct: acct,
        Bal: statement.balances.map((balance, i) => balanceNode(balance, `balances[${i}]`)),
        Ntry: entries.length === 0 ? undefined : entries,
      },
    },
  });
}

function readBalance(balance: Element): CamtBalance {
  const { amount, currency } = readCamtAmount(balance, 'Amt');
  const creditDebit = balance.text('CdtDbtInd', 4);
  if (creditDebit !== 'CRDT' && creditDebit !== 'DBIT') {
    throw new ReadError(`${balance.path}/CdtDbtInd "${creditDebit}" is not CRDT or DBIT`);
  }
  const type = balance.one('Tp').one('CdOrPrtry');
  return {
    type: type.optionalText('Cd', 4) ?? type.text('Prtry'),
    amount,
    currency,
    creditDebit,
    date: readDateChoice(balance.one('Dt')).date,
  };
}

/** Reads `Document/BkToCstmrStmt`; throws {@link ReadError}. */
export function readCamt053(document: Element): Camt053 {
  const message = document.one('BkToCstmrStmt');
  const header = message.one('GrpHdr');
  const accounts = message.all('Stmt');
  if (accounts.length === 0) throw new ReadError(`${message.path}/Stmt is missing`);
  const statements: CamtStatement[] = [];
  const entries: CamtEntry[] = [];
  for (const stmt of accounts) {
    const iban = stmt.one('Acct').one('Id').optionalText('IBAN', 34);
    const balances = stmt.all('Bal').map(readBalance);
    if (balances.length === 0) throw new ReadError(`${stmt.path}/Bal is missing`);
    const sequence = stmt.optionalText('ElctrncSeqNb', 18);
    if (sequence !== undefined && !/^[0-9]{1,18}$/.test(sequence)) {
      throw new ReadError(`${stmt.path}/ElctrncSeqNb "${sequence}" is not a number`);
    }
    const period = stmt.optional('FrToDt');
    statements.push({
      id: stmt.text('Id'),
      sequenceNumber: sequence === undefined ? undefined : Number(sequence),
      accountIban: iban,
      from: period === undefined ? undefined : readDateTime(period.text('FrDtTm', 40), `${period.path}/FrDtTm`),
      to: period === undefined ? undefined : readDateTime(period.text('ToDtTm', 40), `${period.path}/ToDtTm`),
      balances,
    });
    for (const entry of stmt.all('Ntry')) entries.push(readEntry(entry, iban));
  }
  return {
    kind: 'camt.053',
    msgId: header.text('MsgId'),
    createdAt: readDateTime(header.text('CreDtTm', 40), `${header.path}/CreDtTm`),
    statements,
    entries,
  };
}
