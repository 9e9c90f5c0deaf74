/**
 * The BR Code: the EMV® QRCPS merchant-presented payload that a Pix QR code holds and that "Pix
 * Copia e Cola" is, as the Banco Central's *Manual de Padrões para Iniciação do Pix* lays it out.
 *
 * A payload is a sequence of TLV fields — two-digit id, two-digit length, value — ending with the
 * CRC field `63`, whose four upper-case hex digits are the CRC16-CCITT-FALSE (polynomial 0x1021,
 * initial 0xFFFF) of everything before them, including `6304` itself:
 *
 * | id | field                                    | Pix value                                   |
 * |----|------------------------------------------|---------------------------------------------|
 * | 00 | Payload Format Indicator                 | `01`, first                                 |
 * | 01 | Point of Initiation Method (optional)    | `12` one use only, `11` reusable            |
 * | 26 | Merchant Account Information (template)  | 00 GUI `br.gov.bcb.pix`; 01 key (static) or 25 location URL without scheme (dynamic); 02 description (static) |
 * | 52 | Merchant Category Code                   | `0000` when not given                       |
 * | 53 | Transaction Currency                     | `986` (BRL)                                 |
 * | 54 | Transaction Amount (optional)            | `10.50`                                     |
 * | 58 | Country Code                             | `BR`                                        |
 * | 59 | Merchant Name                            | at most 25                                  |
 * | 60 | Merchant City                            | at most 15                                  |
 * | 61 | Postal Code (optional)                   |                                             |
 * | 62 | Additional Data Field (template)         | 05 reference label: the txid (static, ≤ 25) or `***` |
 * | 63 | CRC                                      | 4 hex digits                                |
 *
 * @module
 */
import crc16ccittFalse from 'crc/calculators/crc16ccitt';

/** The Globally Unique Identifier of the Pix arrangement in field 26/00. */
export const PIX_GUI = 'br.gov.bcb.pix';

/** A BR Code that cannot be built or read: `message` says which field and why. */
export class BrCodeError extends Error {
  override name = 'BrCodeError';
}

const encoder = new TextEncoder();

/**
 * The CRC16-CCITT-FALSE of `text`'s UTF-8 bytes (poly 0x1021, init 0xFFFF, no reflection, no final
 * xor) as four upper-case hex digits: the value of field 63 when `text` is the payload up to and
 * including `6304`. Computed by the `crc` package's table-driven calculator.
 */
export function crc16(text: string): string {
  return crc16ccittFalse(encoder.encode(text)).toString(16).toUpperCase().padStart(4, '0');
}

/** One TLV field; `value` is the raw text (a template's value holds its own sub-fields). */
export interface TlvField {
  readonly id: string;
  readonly value: string;
}

/** Encodes one field: id, two-digit length (characters), value. Refuses values over 99 characters. */
export function tlv(id: string, value: string): string {
  if (!/^\d{2}$/.test(id)) throw new BrCodeError(`field id "${id}" is not two digits`);
  const length = [...value].length;
  if (length > 99) throw new BrCodeError(`field ${id} is ${length} characters long, more than 99`);
  return `${id}${String(length).padStart(2, '0')}${value}`;
}

/** Splits a TLV sequence into its fields, in order; throws on a truncated or malformed one. */
export function parseTlv(text: string): TlvField[] {
  const chars = [...text];
  const fields: TlvField[] = [];
  let at = 0;
  while (at < chars.length) {
    const head = chars.slice(at, at + 4).join('');
    if (!/^\d{4}$/.test(head)) throw new BrCodeError(`malformed field header "${head}" at position ${at}`);
    const id = head.slice(0, 2);
    const length = Number(head.slice(2));
    if (at + 4 + length > chars.length) {
      throw new BrCodeError(`field ${id} declares ${length} characters, only ${chars.length - at - 4} remain`);
    }
    fields.push({ id, value: chars.slice(at + 4, at + 4 + length).join('') });
    at += 4 + length;
  }
  return fields;
}

/** Where the payer's app finds the receiver: a Pix key (static code) or a payload location (dynamic). */
export type BrCodeAccount =
  | { readonly kind: 'key'; readonly key: string; readonly description?: string }
  | {
      readonly kind: 'url';
      /** The charge's `location` as the API Pix answers it: host and path, without `https://`. */
      readonly url: string;
    };

export interface BrCodeInput {
  readonly account: BrCodeAccount;
  /** Decimal with two places (`"10.50"`); omitted: the payer types the amount. */
  readonly amount?: string;
  /** At most 25 characters; accents are removed (the EMV character set is ASCII). */
  readonly merchantName: string;
  /** At most 15 characters; accents are removed. */
  readonly merchantCity: string;
  readonly postalCode?: string;
  /** Static codes only: the reference label (field 62/05), at most 25 letters or digits. Default `***`. */
  readonly txid?: string;
  /** Field 01 `12` (one use only) when true, `11` when false, absent when undefined. */
  readonly oneTime?: boolean;
  /** Field 52; default `0000`. */
  readonly merchantCategoryCode?: string;
}

/** A read BR Code: the fields Pix defines, and every top-level field as it came. */
export interface BrCode {
  readonly payloadFormatIndicator: string;
  readonly pointOfInitiation?: '11' | '12';
  readonly account: BrCodeAccount;
  readonly merchantCategoryCode: string;
  readonly currency: string;
  readonly amount?: string;
  readonly countryCode: string;
  readonly merchantName: string;
  readonly merchantCity: string;
  readonly postalCode?: string;
  /** Field 62/05: a static code's txid, or `***`. */
  readonly txid?: string;
  readonly crc: string;
  /** Every top-level field in order (including those this reader does not interpret, e.g. 80). */
  readonly fields: readonly TlvField[];
}

/** Removes diacritics (São → Sao) and refuses what is still not printable ASCII. */
function ascii(what: string, value: string, max: number): string {
  const plain = value.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
  if (!/^[\x20-\x7e]*$/.test(plain)) throw new BrCodeError(`${what} holds characters outside printable ASCII`);
  const trimmed = plain.trim();
  if (trimmed === '') throw new BrCodeError(`${what} is empty`);
  if (trimmed.length > max) throw new BrCodeError(`${what} is more than ${max} characters`);
  return trimmed;
}

/** Builds the payload (the "Pix Copia e Cola" text) with its CRC. */
export function buildBrCode(input: BrCodeInput): string {
  const account =
    input.account.kind === 'key'
      ? tlv('00', PIX_GUI) +
        tlv('01', input.account.key) +
        (input.account.description ? tlv('02', input.account.description) : '')
      : tlv('00', PIX_GUI) + tlv('25', input.account.url.replace(/^https?:\/\//i, ''));
  if (input.account.kind === 'key' && (input.account.key === '' || input.account.key.length > 77)) {
    throw new BrCodeError('the Pix key must have 1 to 77 characters');
  }
  if (input.amount !== undefined && !/^\d{1,10}\.\d{2}$/.test(input.amount)) {
    throw new BrCodeError(`amount "${input.amount}" is not a decimal with two places`);
  }
  const txid = input.txid ?? '***';
  if (txid !== '***' && !/^[a-zA-Z0-9]{1,25}$/.test(txid)) {
    throw new BrCodeError('the txid of field 62/05 must be 1 to 25 letters or digits, or ***');
  }
  const mcc = input.merchantCategoryCode ?? '0000';
  if (!/^\d{4}$/.test(mcc)) throw new BrCodeError('the merchant category code must be four digits');
  const body =
    tlv('00', '01') +
    (input.oneTime === undefined ? '' : tlv('01', input.oneTime ? '12' : '11')) +
    tlv('26', account) +
    tlv('52', mcc) +
    tlv('53', '986') +
    (input.amount !== undefined ? tlv('54', input.amount) : '') +
    tlv('58', 'BR') +
    tlv('59', ascii('merchantName', input.merchantName, 25)) +
    tlv('60', ascii('merchantCity', input.merchantCity, 15)) +
    (input.postalCode !== undefined ? tlv('61', ascii('postalCode', input.postalCode, 99)) : '') +
    tlv('62', tlv('05', txid)) +
    '6304';
  return body + crc16(body);
}

/**
 * Reads and checks a payload: well-formed TLV, `00` = `01` first, the CRC last and right, a Pix
 * merchant account (GUI `br.gov.bcb.pix`, case-insensitive, in one of the templates 26–51) with a
 * key or a URL, currency 986, country BR, name and city present. Throws {@link BrCodeError}.
 */
export function parseBrCode(code: string): BrCode {
  const text = code.trim();
  if (text.length > 512) throw new BrCodeError('a BR Code is at most 512 characters');
  const fields = parseTlv(text);
  const first = fields[0];
  if (first?.id !== '00' || first.value !== '01')
    throw new BrCodeError('field 00 (payload format "01") must come first');
  const last = fields[fields.length - 1];
  if (last?.id !== '63' || !/^[0-9A-Fa-f]{4}$/.test(last.value)) {
    throw new BrCodeError('field 63 (CRC, four hex digits) must come last');
  }
  const expected = crc16(text.slice(0, text.length - 4));
  if (last.value.toUpperCase() !== expected) {
    throw new BrCodeError(`CRC mismatch: the code says ${last.value}, its content gives ${expected}`);
  }
  const ids = new Set<string>();
  for (const field of fields) {
    if (ids.has(field.id)) throw new BrCodeError(`field ${field.id} appears twice`);
    ids.add(field.id);
  }
  const get = (id: string) => fields.find((field) => field.id === id)?.value;
  const required = (id: string, what: string) => {
    const value = get(id);
    if (value === undefined || value === '') throw new BrCodeError(`field ${id} (${what}) is missing`);
    return value;
  };

  let account: BrCodeAccount | undefined;
  for (const field of fields) {
    const id = Number(field.id);
    if (id < 26 || id > 51) continue;
    const sub = parseTlv(field.value);
    if (sub.find((s) => s.id === '00')?.value.toLowerCase() !== PIX_GUI) continue;
    const key = sub.find((s) => s.id === '01')?.value;
    const url = sub.find((s) => s.id === '25')?.value;
    const description = sub.find((s) => s.id === '02')?.value;
    if (url !== undefined && url !== '') account = { kind: 'url', url };
    else if (key !== undefined && key !== '')
      account = { kind: 'key', key, ...(description !== undefined ? { description } : {}) };
    else throw new BrCodeError(`field ${field.id} (Pix account) has neither a key (01) nor a URL (25)`);
    break;
  }
  if (account === undefined) throw new BrCodeError(`no merchant account with GUI ${PIX_GUI} (fields 26–51)`);

  const currency = required('53', 'currency');
  if (currency !== '986') throw new BrCodeError(`field 53 (currency) is ${currency}, not 986`);
  const countryCode = required('58', 'country code');
  if (countryCode !== 'BR') throw new BrCodeError(`field 58 (country code) is ${countryCode}, not BR`);
  const amount = get('54');
  if (amount !== undefined && !/^\d+(\.\d{1,2})?$/.test(amount)) {
    throw new BrCodeError(`field 54 (amount) "${amount}" is not a decimal`);
  }
  const pointOfInitiation = get('01');
  if (pointOfInitiation !== undefined && pointOfInitiation !== '11' && pointOfInitiation !== '12') {
    throw new BrCodeError(`field 01 (point of initiation) is ${pointOfInitiation}, not 11 or 12`);
  }
  const additional = get('62');
  const txid = additional === undefined ? undefined : parseTlv(additional).find((s) => s.id === '05')?.value;
  const postalCode = get('61');
  return {
    payloadFormatIndicator: first.value,
    ...(pointOfInitiation !== undefined ? { pointOfInitiation } : {}),
    account,
    merchantCategoryCode: required('52', 'merchant category code'),
    currency,
    ...(amount !== undefined ? { amount } : {}),
    countryCode,
    merchantName: required('59', 'merchant name'),
    merchantCity: required('60', 'merchant city'),
    ...(postalCode !== undefined ? { postalCode } : {}),
    ...(txid !== undefined ? { txid } : {}),
    crc: last.value.toUpperCase(),
    fields,
  };
}
