/**
 * The payer's document number as the payer page shows it. Anyone holding a payment's link sees
 * that page, so it never shows a whole document number: the authenticated merchant API, the
 * webhook and the portal keep the full one.
 *
 * - A CPF (11 digits, with or without its dots and dash) keeps its middle six digits, the form
 *   Brazilian services use under the LGPD: `***.456.789-**`.
 * - A CNPJ (14 digits) keeps the six digits after the first two: `**.345.678/****-**`.
 * - Any other document keeps at most its middle four letters or digits, and fewer than half of
 *   them (a number of three characters or fewer shows none); every other letter or digit becomes
 *   `*`, and separators (dots, dashes, slashes, spaces) stay where they are, so the shape is still
 *   recognisable: an RFC `GODE561231GR8` shows `****5612*****`.
 */
export function maskDocument(documentNumber: string): string {
  const digits = documentNumber.replace(/[.\-/\s]/g, '');
  if (/^[0-9]{11}$/.test(digits)) return `***.${digits.slice(3, 6)}.${digits.slice(6, 9)}-**`;
  if (/^[0-9]{14}$/.test(digits)) return `**.${digits.slice(2, 5)}.${digits.slice(5, 8)}/****-**`;
  const significant = [...documentNumber].filter((c) => /[\p{L}\p{N}]/u.test(c)).length;
  const shown = significant <= 3 ? 0 : Math.min(4, Math.floor(significant / 3));
  const start = Math.floor((significant - shown) / 2);
  let index = 0;
  return [...documentNumber]
    .map((c) => {
      if (!/[\p{L}\p{N}]/u.test(c)) return c;
      const keep = index >= start && index < start + shown;
      index += 1;
      return keep ? c : '*';
    })
    .join('');
}
