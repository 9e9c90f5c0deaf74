/**
 * `pain.002`, the bank's payment status report on a `pain.001`: the status of the whole file
 * (`OrgnlGrpInfAndSts/GrpSts`), of each payment information block and of each transaction
 * (`OrgnlPmtInfAndSts/TxInfAndSts`), each with its reason code. Written as `pain.002.001.10`; read
 * as `.001.10`, `.001.11` and `.001.03`, whose elements read here are the same.
 *
 * ```text
 * Document/CstmrPmtStsRpt
 *   GrpHdr              MsgId, CreDtTm
 *   OrgnlGrpInfAndSts   OrgnlMsgId, OrgnlMsgNmId, GrpSts?, StsRsnInf/Rsn/Cd?
 *   OrgnlPmtInfAndSts*  OrgnlPmtInfId, PmtInfSts?, StsRsnInf/Rsn/Cd?,
 *     TxInfAndSts*      OrgnlEndToEndId, TxSts, StsRsnInf/Rsn/Cd?
 * ```
 *
 * @module
 */
import { isPlainText } from './text.js';
import { type BuildNode, type Element, buildDocument, isoDateTime, readDateTime } from './xml.js';

/** The namespace `writePain002` writes. */
export const PAIN_002_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.002.001.10';

/** Every `pain.002` namespace `readBankFile` reads. */
export const PAIN_002_NAMESPACES: readonly string[] = [
  PAIN_002_NAMESPACE,
  'urn:iso:std:iso:20022:tech:xsd:pain.002.001.11',
  'urn:iso:std:iso:20022:tech:xsd:pain.002.001.03',
];

/** The status of one transaction of the original `pain.001`. */
export interface Pain002Transaction {
  /** `TxInfAndSts/OrgnlEndToEndId`: the payout's `orderNo`. */
  readonly originalEndToEndId: string;
  /** `TxSts`: `ACSC`, `ACCC`, `RJCT`, `ACCP`, `PDNG`, … */
  readonly status: string;
  /** `StsRsnInf/Rsn/Cd` (the first one with a code): `AC01`, `AC04`, `FF01`, … */
  readonly reason?: string | undefined;
}

/** The status of one payment information block (`OrgnlPmtInfAndSts` without its transactions). */
export interface Pain002PaymentInformation {
  /** `OrgnlPmtInfId`. */
  readonly originalPaymentInformationId: string;
  /** `PmtInfSts`. */
  readonly status?: string | undefined;
  /** `StsRsnInf/Rsn/Cd` of the block (the first one with a code). */
  readonly reason?: string | undefined;
}

/** A `pain.002` status report. */
export interface Pain002 {
  readonly kind: 'pain.002';
  /** `GrpHdr/MsgId`: the report's own identifier. */
  readonly msgId: string;
  /** `GrpHdr/CreDtTm`. */
  readonly createdAt: Date;
  /** `OrgnlGrpInfAndSts/OrgnlMsgId`: the `MsgId` of the `pain.001` reported on. */
  readonly originalMsgId: string;
  /** `OrgnlGrpInfAndSts/OrgnlMsgNmId`: the original's message name, `pain.001.001.09` when written by default. */
  readonly originalMessageNameId?: string | undefined;
  /** `GrpSts`: `ACSC`, `RJCT`, `PART`, `ACCP`, … */
  readonly groupStatus?: string | undefined;
  /** `StsRsnInf/Rsn/Cd` of the group (the first one with a code). */
  readonly groupReason?: string | undefined;
  /** Every `OrgnlPmtInfAndSts/TxInfAndSts`, all blocks' in document order. */
  readonly transactions: readonly Pain002Transaction[];
  /**
   * Every `OrgnlPmtInfAndSts` with its own status, in document order (read; optional when
   * writing). Writing puts every transaction into the first block; without blocks and with
   * transactions, one block is written whose `OrgnlPmtInfId` is the `originalMsgId`.
   */
  readonly paymentInformation?: readonly Pain002PaymentInformation[] | undefined;
}

/** A status report that cannot be written: `message` names the member and why. */
export class Pain002Error extends Error {
  override name = 'Pain002Error';
}

/** An ISO external code (`ExternalStatusReason1Code` and the like): 1–4 characters. */
function code(value: string | undefined, member: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[A-Z0-9]{1,4}$/.test(value))
    throw new Pain002Error(`${member} "${value}" is not a code of 1–4 upper-case letters or digits`);
  return value;
}

function requiredCode(value: string, member: string): string {
  return code(value, member) ?? value;
}

function id(value: string, member: string): string {
  if (value.length < 1 || value.length > 35 || value.trim() !== value || !isPlainText(value)) {
    throw new Pain002Error(`${member} "${value}" must be 1–35 characters, no control character or surrounding space`);
  }
  return value;
}

function reasonNode(reason: string | undefined, member: string): BuildNode | undefined {
  const cd = code(reason, member);
  return cd === undefined ? undefined : { Rsn: { Cd: cd } };
}

/**
 * Writes a `pain.002.001.10` status report, valid against the XSD (the .001.11 one with its
 * namespace rewritten: see `validateXml`). `OrgnlMsgNmId` is `pain.001.001.09` unless
 * `originalMessageNameId` says otherwise. Throws {@link Pain002Error} on an identifier over 35
 * characters or a code that is not 1–4 upper-case letters or digits.
 */
export function writePain002(report: Omit<Pain002, 'kind'>): string {
  if (Number.isNaN(report.createdAt.getTime())) throw new Pain002Error('createdAt is not a valid date');
  const transactions: BuildNode[] = report.transactions.map((tx, index) => ({
    OrgnlEndToEndId: id(tx.originalEndToEndId, `transactions[${index}].originalEndToEndId`),
    TxSts: requiredCode(tx.status, `transactions[${index}].status`),
    StsRsnInf: reasonNode(tx.reason, `transactions[${index}].reason`),
  }));
  const blocks = [...(report.paymentInformation ?? [])];
  if (blocks.length === 0 && transactions.length > 0)
    blocks.push({ originalPaymentInformationId: report.originalMsgId });
  const blockNodes: BuildNode[] = blocks.map((block, index) => ({
    OrgnlPmtInfId: id(block.originalPaymentInformationId, `paymentInformation[${index}].originalPaymentInformationId`),
    PmtInfSts: code(block.status, `paymentInformation[${index}].status`),
    StsRsnInf: reasonNode(block.reason, `paymentInformation[${index}].reason`),
    TxInfAndSts: index === 0 && transactions.length > 0 ? transactions : undefined,
  }));
  return buildDocument(PAIN_002_NAMESPACE, {
    CstmrPmtStsRpt: {
      GrpHdr: { MsgId: id(report.msgId, 'msgId'), CreDtTm: isoDateTime(report.createdAt) },
      OrgnlGrpInfAndSts: {
        OrgnlMsgId: id(report.originalMsgId, 'originalMsgId'),
        OrgnlMsgNmId: id(report.originalMessageNameId ?? 'pain.001.001.09', 'originalMessageNameId'),
        GrpSts: code(report.groupStatus, 'groupStatus'),
        StsRsnInf: reasonNode(report.groupReason, 'groupReason'),
      },
      OrgnlPmtInfAndSts: blockNodes.length > 0 ? blockNodes : undefined,
    },
  });
}

/** Reads a code (`GrpSts`, `TxSts`, `Rsn/Cd`): 1–4 characters, as the XSDs' external code types. */
function readCode(element: Element, name: string): string | undefined {
  return element.optionalText(name, 4);
}

/** The first `StsRsnInf/Rsn/Cd` of `element` (a `Prtry` reason is not a code and is passed over). */
function firstReason(element: Element): string | undefined {
  for (const info of element.all('StsRsnInf')) {
    const cd = info.optional('Rsn')?.optionalText('Cd', 4);
    if (cd !== undefined) return cd;
  }
  return undefined;
}

/** Reads `Document/CstmrPmtStsRpt`; throws {@link ReadError}. */
export function readPain002(document: Element): Pain002 {
  const report = document.one('CstmrPmtStsRpt');
  const header = report.one('GrpHdr');
  const group = report.one('OrgnlGrpInfAndSts');
  const paymentInformation: Pain002PaymentInformation[] = [];
  const transactions: Pain002Transaction[] = [];
  for (const block of report.all('OrgnlPmtInfAndSts')) {
    paymentInformation.push({
      originalPaymentInformationId: block.text('OrgnlPmtInfId'),
      status: readCode(block, 'PmtInfSts'),
      reason: firstReason(block),
    });
    for (const tx of block.all('TxInfAndSts')) {
      transactions.push({
        originalEndToEndId: tx.text('OrgnlEndToEndId'),
        status: tx.text('TxSts', 4),
        reason: firstReason(tx),
      });
    }
  }
  return {
    kind: 'pain.002',
    msgId: header.text('MsgId'),
    createdAt: readDateTime(header.text('CreDtTm', 40), `${header.path}/CreDtTm`),
    originalMsgId: group.text('OrgnlMsgId'),
    originalMessageNameId: group.optionalText('OrgnlMsgNmId'),
    groupStatus: readCode(group, 'GrpSts'),
    groupReason: firstReason(group),
    transactions,
    paymentInformation,
  };
}
