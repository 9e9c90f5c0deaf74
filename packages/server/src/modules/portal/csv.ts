/** CSV (RFC 4180) for the portal's exports, safe to open in a spreadsheet. */

const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * One cell: quoted when it holds a separator, quote or line break; text that a spreadsheet would
 * run as a formula (starting with = + - @ or a control character) is prefixed with `'`. Plain
 * numbers, negative ones included, are left as they are.
 */
export function csvCell(value: string | number | null | undefined): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (!NUMBER.test(text) && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRow(cells: readonly (string | number | null | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
