/**
 * `pain.001.001.09`, the customer's credit-transfer initiation, as the European Payments Council's
 * SEPA Credit Transfer customer-to-PSP implementation guidelines (EPC132-08, 2023 version 1.0) lay
 * it out: one group header, one payment information block (the debtor) and one `CdtTrfTxInf` per
 * payout.
 *
 * ```text
 * Document/CstmrCdtTrfInitn
 *   GrpHdr        MsgId, CreDtTm, NbOfTxs, CtrlSum, InitgPty/Nm (the debtor's name)
 *   PmtInf        PmtInfId, PmtMtd TRF, NbOfTxs, CtrlSum, PmtTpInf(SvcLvl/Cd SEPA, LclInstrm/Cd INST for
 *                 SEPA Instant), ReqdExctnDt/Dt,
 *                 Dbtr/Nm, DbtrAcct/Id/IBAN, DbtrAgt/FinInstnId (BICFI, or Othr/Id NOTPROVIDED),
 *                 ChrgBr SLEV
 *     CdtTrfTxInf PmtId/EndToEndId, Amt/InstdAmt Ccy="EUR", CdtrAgt/FinInstnId/BICFI (when a BIC
 *                 was given), Cdtr/Nm, CdtrAcct/Id/IBAN, RmtInf/Ustrd (when given)
 * ```
 *
 * @module
 */
import {
  centsToEur,
  eurToCents,
  foldToEpcLatin,
  isBic,
  isEpcLatin,
  EPC_NAME_MAX,
  MAX_SCT_CENTS,
  isEpcReference,
  normalizeIban,
  toEpcLatin,
} from './text.js';
import {
  type BuildNode,
  type Element,
  ReadError,
  buildDocument,
  isIsoDate,
  isoDateTime,
  parseDocument,
  readDateTime,
  readFailure,
} from './xml.js';

/** The namespace of `pain.001.001.09`. */
export const PAIN_001_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.001.001.09';

/** An account holder: a name, an IBAN and, when known, the BIC of the holder's bank. */
export interface Party {
  readonly name: string;
  readonly iban: string;
  readonly bic?: string | undefined;
}

/** One payout: a `CdtTrfTxInf`. */
export interface CreditTransfer {
  /** `PmtId/EndToEndId`: the payout's `orderNo` (`W…`), at most 35 characters of the EPC Latin set. */
  readonly endToEndId: string;
  /** `Amt/InstdAmt` in EUR as a decimal string, e.g. `"12.30"`: at most 2 decimals, more than 0. */
  readonly amount: string;
  /** `Cdtr/Nm` (written through {@link toEpcLatin}), `CdtrAcct/Id/IBAN`, `CdtrAgt/FinInstnId/BICFI`. */
  readonly creditor: Party;
  /** `RmtInf/Ustrd`: folded into the EPC Latin set, at most 140 characters. */
  readonly remittanceInformation?: string | undefined;
}

/** One `pain.001` file: a batch of payouts from one debtor account. */
export interface Pain001 {
  /** `GrpHdr/MsgId`: at most 35 characters of the EPC Latin set, never used before. */
  readonly msgId: string;
  /** `GrpHdr/CreDtTm`, written in UTC at second precision. */
  readonly createdAt: Date;
  /** `PmtInf/ReqdExctnDt/Dt`: `YYYY-MM-DD`. */
  readonly requestedExecutionDate: string;
  /** `PmtInf/PmtInfId`. */
  readonly paymentInformationId: string;
  /** `Dbtr/Nm` (and `GrpHdr/InitgPty/Nm`), `DbtrAcct/Id/IBAN`, `DbtrAgt/FinInstnId/BICFI`. */
  readonly debtor: Party;
  readonly transactions: readonly CreditTransfer[];
  /**
   * `PmtInf/BtchBookg`: `false` asks the bank to book each transfer as its own entry (one `camt.054`
   * entry per payout), `true` one entry for the block. Left out when not given: the bank's default.
   */
  readonly batchBooking?: boolean | undefined;
  /**
   * SEPA Instant Credit Transfers (SCT Inst): `PmtTpInf/LclInstrm/Cd` `INST` beside `SvcLvl/Cd`
   * `SEPA`, as banks take instant transfers in the same `pain.001.001.09` (the EPC's SCT XSD
   * allows it). Read as `true` when a file says `INST`.
   */
  readonly instant?: boolean | undefined;
}

/** A `pain.001` that cannot be written: `message` names the member and why. */
export class Pain001Error extends Error {
  override name = 'Pain001Error';
}

/** The longest `Ustrd` (Max140Text). */
const USTRD_MAX = 140;

function reference(value: string, member: string): string {
  if (!isEpcReference(value)) {
    throw new Pain001Error(
      `${member} "${value}" must be 1–35 characters of the EPC Latin set, without a leading or trailing '/' or '//'`,
    );
  }
  return value;
}

function name(value: string, member: string): string {
  const folded = toEpcLatin(value);
  if (folded === '') throw new Pain001Error(`${member} "${value}" has no character of the EPC Latin set`);
  return folded;
}

function iban(value: string, member: string): string {
  const normalized = normalizeIban(value);
  if (normalized === undefined) throw new Pain001Error(`${member} "${value}" is not a valid IBAN`);
  return normalized;
}

function bic(value: string | undefined, member: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isBic(value)) throw new Pain001Error(`${member} "${value}" is not a BIC (8 or 11 characters, upper case)`);
  return value;
}

/**
 * Writes `input` as a `pain.001.001.09` document valid against the EPC's SCT C2PSP XSD and returns
 * its UTF-8 XML text: `PmtMtd` `TRF`, `SvcLvl/Cd` `SEPA`, `ChrgBr` `SLEV`, `NbOfTxs` and `CtrlSum`
 * exact in `GrpHdr` and `PmtInf` (summed in integer cents, never floats), every amount with
 * `Ccy="EUR"`, `CdtrAgt` only when the creditor's BIC was given, `DbtrAgt/FinInstnId/BICFI` when
 * the debtor's is known and otherwise `Othr/Id` `NOTPROVIDED` (the form EPC132-08 gives for it).
 * Names are written through {@link toEpcLatin}.
 *
 * Throws {@link Pain001Error} on input that cannot make a valid file: no transaction, an amount
 * that is not a EUR amount above 0 with at most 2 decimals (or above 999,999,999.99), an invalid
 * IBAN or BIC, an identifier outside the EPC rules for references, two transactions with one
 * `endToEndId`, a name with no EPC Latin character left, a remittance text over 140 characters.
 */
export function writePain001(input: Pain001): string {
  if (input.transactions.length === 0) throw new Pain001Error('a pain.001 needs at least one transaction');
  const msgId = reference(input.msgId, 'msgId');
  const paymentInformationId = reference(input.paymentInformationId, 'paymentInformationId');
  if (!isIsoDate(input.requestedExecutionDate)) {
    throw new Pain001Error(`requestedExecutionDate "${input.requestedExecutionDate}" is not a YYYY-MM-DD date`);
  }
  if (Number.isNaN(input.createdAt.getTime())) throw new Pain001Error('createdAt is not a valid date');
  const debtorName = name(input.debtor.name, 'debtor.name');
  const debtorIban = iban(input.debtor.iban, 'debtor.iban');
  const debtorBic = bic(input.debtor.bic, 'debtor.bic');

  const seen = new Set<string>();
  let totalCents = 0;
  const transactions: BuildNode[] = input.transactions.map((tx, index) => {
    const at = `transactions[${index}]`;
    const endToEndId = reference(tx.endToEndId, `${at}.endToEndId`);
    if (seen.has(endToEndId)) throw new Pain001Error(`${at}.endToEndId "${endToEndId}" appears twice in the file`);
    seen.add(endToEndId);
    const cents = eurToCents(tx.amount);
    if (cents === undefined || cents <= 0 || cents > MAX_SCT_CENTS) {
      throw new Pain001Error(`${at}.amount "${tx.amount}" is not a EUR amount from 0.01 to 999999999.99`);
    }
    totalCents += cents;
    const creditorBic = bic(tx.creditor.bic, `${at}.creditor.bic`);
    let ustrd: string | undefined;
    if (tx.remittanceInformation !== undefined) {
      ustrd = toEpcLatinText(tx.remittanceInformation);
      if (ustrd.length > USTRD_MAX) throw new Pain001Error(`${at}.remittanceInformation is longer than 140 characters`);
      if (ustrd === '') ustrd = undefined;
    }
    return {
      PmtId: { EndToEndId: endToEndId },
      Amt: { InstdAmt: { '@_Ccy': 'EUR', '#text': centsToEur(cents) } },
      CdtrAgt: creditorBic === undefined ? undefined : { FinInstnId: { BICFI: creditorBic } },
      Cdtr: { Nm: name(tx.creditor.name, `${at}.creditor.name`) },
      CdtrAcct: { Id: { IBAN: iban(tx.creditor.iban, `${at}.creditor.iban`) } },
      RmtInf: ustrd === undefined ? undefined : { Ustrd: ustrd },
    };
  });
  if (!Number.isSafeInteger(totalCents)) throw new Pain001Error('the control sum is too large');
  const numberOfTransactions = String(transactions.length);
  const controlSum = centsToEur(totalCents);

  return buildDocument(PAIN_001_NAMESPACE, {
    CstmrCdtTrfInitn: {
      GrpHdr: {
        MsgId: msgId,
        CreDtTm: isoDateTime(input.createdAt),
        NbOfTxs: numberOfTransactions,
        CtrlSum: controlSum,
        InitgPty: { Nm: debtorName },
      },
      PmtInf: {
        PmtInfId: paymentInformationId,
        PmtMtd: 'TRF',
        BtchBookg: input.batchBooking === undefined ? undefined : String(input.batchBooking),
        NbOfTxs: numberOfTransactions,
        CtrlSum: controlSum,
        PmtTpInf: { SvcLvl: { Cd: 'SEPA' }, LclInstrm: input.instant === true ? { Cd: 'INST' } : undefined },
        ReqdExctnDt: { Dt: input.requestedExecutionDate },
        Dbtr: { Nm: debtorName },
        DbtrAcct: { Id: { IBAN: debtorIban } },
        DbtrAgt: { FinInstnId: debtorBic === undefined ? { Othr: { Id: 'NOTPROVIDED' } } : { BICFI: debtorBic } },
        ChrgBr: 'SLEV',
        CdtTrfTxInf: transactions,
      },
    },
  });
}

/** Free text (remittance information) folded into the EPC Latin set, without the 70-character cut of names. */
function toEpcLatinText(text: string): string {
  return isEpcLatin(text) ? text.trim() : foldToEpcLatin(text);
}

/**
 * Reads a `pain.001.001.09` (the bank's side) into the shape {@link writePain001} takes. Checks what
 * a bank checks beyond the XSD (run {@link validateXml} for the XSD itself): one `PmtInf`,
 * `NbOfTxs` and `CtrlSum` in `GrpHdr` and `PmtInf` equal to the count and the sum of the
 * transactions, every amount in EUR with at most 2 decimals, IBANs and BICs valid, `EndToEndId`s
 * unique, names and `Ustrd` in the EPC Latin set, `MsgId`, `PmtInfId` and `EndToEndId` under the
 * EPC rules for references. Never throws: anything else is `ok: false` with a one-line reason.
 */
export function readPain001(xml: string | Uint8Array): { ok: true; file: Pain001 } | { ok: false; reason: string } {
  try {
    const { namespace, root } = parseDocument(xml);
    if (namespace !== PAIN_001_NAMESPACE) throw new ReadError(`namespace "${namespace}" is not pain.001.001.09`);
    return { ok: true, file: readInitiation(root.one('CstmrCdtTrfInitn')) };
  } catch (error) {
    return { ok: false, reason: readFailure(error) };
  }
}

/** A text member that must be in the EPC Latin set (a name, `Ustrd`). */
function epcText(element: Element, member: string, maxLength: number): string {
  const text = element.text(member, maxLength);
  if (!isEpcLatin(text)) throw new ReadError(`${element.path}/${member} "${text}" is not in the EPC Latin set`);
  return text;
}

/** A reference member (`MsgId`, `PmtInfId`, `EndToEndId`) under the EPC rules for references. */
function epcReference(element: Element, member: string): string {
  const text = element.text(member, 35);
  if (!isEpcReference(text))
    throw new ReadError(`${element.path}/${member} "${text}" breaks the EPC rules for references`);
  return text;
}

function readParty(nameOf: Element, account: Element, agent: Element | undefined, what: string): Party {
  const partyIban = account.one('Id').text('IBAN', 34);
  if (normalizeIban(partyIban) !== partyIban) throw new ReadError(`${account.path}/Id/IBAN is not a valid IBAN`);
  const partyBic = agent?.one('FinInstnId').optionalText('BICFI', 11);
  if (partyBic !== undefined && !isBic(partyBic)) throw new ReadError(`${what} BIC "${partyBic}" is not a BIC`);
  return { name: epcText(nameOf, 'Nm', EPC_NAME_MAX), iban: partyIban, bic: partyBic };
}

function readInitiation(initiation: Element): Pain001 {
  const header = initiation.one('GrpHdr');
  const blocks = initiation.all('PmtInf');
  if (blocks.length !== 1) throw new ReadError(`expected one PmtInf, found ${blocks.length}`);
  const block = blocks[0] as Element;
  const method = block.text('PmtMtd');
  if (method !== 'TRF') throw new ReadError(`PmtInf/PmtMtd is "${method}", not TRF`);
  const seen = new Set<string>();
  let totalCents = 0;
  const transactions = block.all('CdtTrfTxInf').map((tx): CreditTransfer => {
    const endToEndId = epcReference(tx.one('PmtId'), 'EndToEndId');
    if (seen.has(endToEndId)) throw new ReadError(`EndToEndId "${endToEndId}" appears twice`);
    seen.add(endToEndId);
    const amount = tx.one('Amt').leaf('InstdAmt', 20);
    const currency = amount.attributes['Ccy'];
    if (currency !== 'EUR') throw new ReadError(`${amount.path}/@Ccy is "${currency ?? ''}", not EUR`);
    const cents = eurToCents(amount.text);
    if (cents === undefined || cents <= 0) throw new ReadError(`${amount.path} "${amount.text}" is not a EUR amount`);
    totalCents += cents;
    const remittanceBlock = tx.optional('RmtInf');
    const remittance = remittanceBlock?.optionalText('Ustrd', 140);
    if (remittance !== undefined && !isEpcLatin(remittance)) {
      throw new ReadError(`${remittanceBlock?.path ?? ''}/Ustrd is not in the EPC Latin set`);
    }
    return {
      endToEndId,
      amount: centsToEur(cents),
      creditor: readParty(tx.one('Cdtr'), tx.one('CdtrAcct'), tx.optional('CdtrAgt'), `${tx.path} creditor`),
      remittanceInformation: remittance,
    };
  });
  if (transactions.length === 0) throw new ReadError('PmtInf has no CdtTrfTxInf');
  for (const [where, element] of [
    ['GrpHdr', header],
    ['PmtInf', block],
  ] as const) {
    const count = element.text('NbOfTxs', 15);
    if (count !== String(transactions.length)) {
      throw new ReadError(`${where}/NbOfTxs is ${count}, the file holds ${transactions.length} transactions`);
    }
    const sum = element.optionalText('CtrlSum', 20);
    if (sum !== undefined && eurToCents(sum) !== totalCents) {
      throw new ReadError(`${where}/CtrlSum is ${sum}, the transactions add up to ${centsToEur(totalCents)}`);
    }
  }
  const batchBooking = block.optionalText('BtchBookg', 5);
  if (batchBooking !== undefined && !['true', 'false', '1', '0'].includes(batchBooking)) {
    throw new ReadError(`PmtInf/BtchBookg "${batchBooking}" is not a boolean`);
  }
  const date = block.one('ReqdExctnDt').text('Dt', 10);
  if (!isIsoDate(date)) throw new ReadError(`PmtInf/ReqdExctnDt/Dt "${date}" is not a date`);
  return {
    msgId: epcReference(header, 'MsgId'),
    createdAt: readDateTime(header.text('CreDtTm', 40), 'GrpHdr/CreDtTm'),
    requestedExecutionDate: date,
    paymentInformationId: epcReference(block, 'PmtInfId'),
    debtor: readParty(block.one('Dbtr'), block.one('DbtrAcct'), block.one('DbtrAgt'), 'the debtor'),
    transactions,
    batchBooking: batchBooking === undefined ? undefined : batchBooking === 'true' || batchBooking === '1',
    instant: block.optional('PmtTpInf')?.optional('LclInstrm')?.optionalText('Cd', 35) === 'INST' ? true : undefined,
  };
}
