/**
 * Payer and payee documents and account numbers in the back office: whole to the roles that need
 * them (the `documents` capability: admin, support, finance), masked to the others (auditor): all
 * but the last three letters or digits replaced by `•`, the separators kept, so that a document
 * can still be told apart and matched against what a caller reads out, never copied whole.
 */

/** `123.456.789-01` → `•••.•••.••9-01`; short values are masked whole. */
export function maskValue(value: string): string {
  const alphanumerics = value.replace(/[^0-9A-Za-z]/g, '').length;
  const keep = alphanumerics > 6 ? 3 : 0;
  let seen = 0;
  let masked = '';
  for (const char of value) {
    if (/[0-9A-Za-z]/.test(char)) {
      seen++;
      masked += seen > alphanumerics - keep ? char : '•';
    } else masked += char;
  }
  return masked;
}

/** The members that hold a document or an account number, wherever they appear in an answer. */
const SENSITIVE = new Set([
  'documentNumber',
  'accountNumber',
  'iban',
  'payerDocument',
  'payeeDocument',
  'payeeAccount',
]);

/**
 * `value` with every sensitive member masked, at any depth (orders, receipts, what was sent to a
 * channel), when `whole` is false; `value` itself when true.
 */
export function masked<T>(value: T, whole: boolean): T {
  if (whole) return value;
  const walk = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(walk);
    if (item === null || typeof item !== 'object') return item;
    return Object.fromEntries(
      Object.entries(item).map(([key, member]) => [
        key,
        SENSITIVE.has(key) && typeof member === 'string' ? maskValue(member) : walk(member),
      ]),
    );
  };
  return walk(value) as T;
}
