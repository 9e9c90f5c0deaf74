import { createHash } from 'node:crypto';
import type { BankDetails, Method } from './model.js';

/** What the payer needs for each method: a Pix copy-and-paste code, a boleto line, or bank details. */
export interface PayerInstructions {
  readonly pixCode?: string;
  readonly boletoLine?: string;
  readonly bankDetails?: BankDetails;
}

const BENEFICIARY = 'PAYGATE PSP SIMULATOR';

/** Deterministic digits from a seed, so a charge's instructions never change. */
function digits(seed: string, count: number): string {
  const hash = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; out.length < count; i++) out += String((hash[i % hash.length] ?? 0) % 10);
  return out;
}

/** CRC-16/CCITT-FALSE, as the Pix BR Code uses for its field 63. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

/** A static-shaped Pix BR Code (EMV QR "copia e cola") carrying the amount and the charge as txid. */
function pixCode(id: string, amount: string): string {
  const key = `${digits(id, 8)}-${digits(`${id}a`, 4)}-4${digits(`${id}b`, 3)}-8${digits(`${id}c`, 3)}-${digits(`${id}d`, 12)}`;
  const txid = id.replace(/[^A-Za-z0-9]/g, '').slice(0, 25);
  const payload =
    field('00', '01') +
    field('26', field('00', 'br.gov.bcb.pix') + field('01', key)) +
    field('52', '0000') +
    field('53', '986') +
    field('54', amount) +
    field('58', 'BR') +
    field('59', BENEFICIARY.slice(0, 25)) +
    field('60', 'SAO PAULO') +
    field('62', field('05', txid)) +
    '6304';
  return payload + crc16(payload);
}

/** Modulo-10 check digit of a boleto line field. */
function mod10(text: string): string {
  let sum = 0;
  [...text].reverse().forEach((char, i) => {
    const product = Number(char) * (i % 2 === 0 ? 2 : 1);
    sum += product > 9 ? product - 9 : product;
  });
  return String((10 - (sum % 10)) % 10);
}

/** A 47-digit boleto "linha digitável" for the amount (bank 001, currency 9). */
function boletoLine(id: string, amount: string): string {
  const free = digits(id, 25);
  const a = `0019${free.slice(0, 5)}`;
  const b = free.slice(5, 15);
  const c = free.slice(15, 25);
  const [units = '0', fraction = ''] = amount.split('.');
  const cents = `${units}${fraction.padEnd(2, '0').slice(0, 2)}`;
  const value = `1000${cents.slice(-10).padStart(10, '0')}`.slice(-14);
  return `${a.slice(0, 5)}.${a.slice(5)}${mod10(a)} ${b.slice(0, 5)}.${b.slice(5)}${mod10(b)} ${c.slice(0, 5)}.${c.slice(5)}${mod10(c)} ${digits(`${id}dv`, 1)} ${value}`;
}

export function payerInstructions(id: string, method: Method, amount: string): PayerInstructions {
  switch (method) {
    case 'PIX':
      return { pixCode: pixCode(id, amount) };
    case 'BOLETO':
      return { boletoLine: boletoLine(id, amount) };
    case 'SPEI':
      return {
        bankDetails: { beneficiary: BENEFICIARY, bank: 'STP', account: `646180${digits(id, 12)}`, reference: id },
      };
    case 'SEPA':
      return {
        bankDetails: {
          beneficiary: BENEFICIARY,
          bank: 'Simulated Bank',
          account: `DE89370400${digits(id, 12)}`,
          bic: 'COBADEFFXXX',
          reference: id,
        },
      };
    case 'CARD':
      return {};
  }
}
