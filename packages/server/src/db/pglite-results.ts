import { messages, types } from '@electric-sql/pglite';

type Parser = (value: string, typeId: number) => unknown;

/** One statement's answer as PGlite's own parseResults gives it: rows as objects by column name. */
export interface StatementResult<T> {
  readonly rows: T[];
  readonly affectedRows: number;
}

/** The columns of one RowDescription: their names and each value's parser. */
interface Columns {
  readonly names: string[];
  readonly typeIds: number[];
  readonly parsers: (Parser | undefined)[];
}

/** The commands whose CommandComplete row count PGlite adds to `affectedRows`. */
const COUNTED = new Set(['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE']);

/** The fields of an ErrorResponse, by their code, as PostgreSQL's protocol names them. */
const ERROR_FIELDS: Record<string, keyof messages.DatabaseError> = {
  S: 'severity',
  C: 'code',
  D: 'detail',
  H: 'hint',
  P: 'position',
  p: 'internalPosition',
  q: 'internalQuery',
  W: 'where',
  s: 'schema',
  t: 'table',
  c: 'column',
  d: 'dataType',
  n: 'constraint',
  F: 'file',
  L: 'line',
  R: 'routine',
};

/**
 * The answers to one exchange with the embedded database, read from the backend's bytes as they
 * are: one result per CommandComplete (the rows of its RowDescription and DataRows, and the row
 * count an INSERT, UPDATE, DELETE, COPY or MERGE reports, added up as PGlite's parseResults adds
 * them), and the first ErrorResponse as PGlite's DatabaseError with every field it carries.
 *
 * Why not PGlite's execProtocol and parseResults: they make a message object per DataRow with a
 * copy of each value's bytes (an ArrayBuffer slice and a decode per value), then an array of
 * entries per row: 0.45 of 7.3 Ed25519 verifications of CPU per create on the embedded database
 * (2026-12-02, the api bench's profile), most of what PGlite's JavaScript costs there. Here each
 * value is decoded once from the exchange's buffer and parsed by the session's own parsers (the
 * same function PGlite would call for its type); every other message (ParseComplete, BindComplete,
 * NoData, ReadyForQuery, notices) is skipped.
 */
export function readResults<T>(
  bytes: Buffer,
  parsers: Record<number | string, Parser>,
): { results: StatementResult<T>[]; error: messages.DatabaseError | undefined } {
  const results: StatementResult<T>[] = [];
  let error: messages.DatabaseError | undefined;
  let columns: Columns | undefined;
  let rows: T[] = [];
  let affected = 0;
  let at = 0;
  while (at + 5 <= bytes.length) {
    const kind = bytes[at] as number;
    const length = bytes.readInt32BE(at + 1);
    const body = at + 5;
    const end = at + 1 + length;
    if (length < 4 || end > bytes.length) throw new Error('the embedded database answered a truncated message');
    at = end;
    switch (kind) {
      case 0x54: // T: RowDescription
        columns = rowDescription(bytes, body, parsers);
        break;
      case 0x44: // D: DataRow
        if (columns) rows.push(dataRow<T>(bytes, body, columns));
        break;
      case 0x43: {
        // C: CommandComplete
        const tag = bytes.toString('utf8', body, end - 1).split(' ');
        const count = Number.parseInt(tag[tag.length - 1] as string, 10);
        if (COUNTED.has(tag[0] as string)) affected += count;
        results.push({ rows, affectedRows: affected });
        columns = undefined;
        rows = [];
        break;
      }
      case 0x45: // E: ErrorResponse
        error ??= errorResponse(bytes, body, end, length + 1);
        break;
    }
  }
  if (results.length === 0) results.push({ rows: [], affectedRows: 0 });
  return { results, error };
}

function rowDescription(bytes: Buffer, at: number, parsers: Record<number | string, Parser>): Columns {
  const count = bytes.readInt16BE(at);
  let offset = at + 2;
  const names: string[] = new Array(count);
  const typeIds: number[] = new Array(count);
  const columnParsers: (Parser | undefined)[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const nameEnd = bytes.indexOf(0, offset);
    names[i] = bytes.toString('utf8', offset, nameEnd);
    offset = nameEnd + 1;
    // table OID (4), column number (2), type OID (4), type size (2), type modifier (4), format (2)
    const typeId = bytes.readInt32BE(offset + 6);
    offset += 18;
    typeIds[i] = typeId;
    columnParsers[i] = (parsers[typeId] ?? (types.parsers as Record<number, Parser>)[typeId]) as Parser | undefined;
  }
  return { names, typeIds, parsers: columnParsers };
}

function dataRow<T>(bytes: Buffer, at: number, { names, typeIds, parsers }: Columns): T {
  const count = bytes.readInt16BE(at);
  let offset = at + 2;
  const row: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const length = bytes.readInt32BE(offset);
    offset += 4;
    if (length < 0) {
      row[names[i] as string] = null;
      continue;
    }
    const text = bytes.toString('utf8', offset, offset + length);
    offset += length;
    const parser = parsers[i];
    row[names[i] as string] = parser ? parser(text, typeIds[i] as number) : text;
  }
  return row as T;
}

function errorResponse(bytes: Buffer, at: number, end: number, length: number): messages.DatabaseError {
  const fields: Record<string, string> = {};
  let offset = at;
  while (offset < end && bytes[offset] !== 0) {
    const code = String.fromCharCode(bytes[offset] as number);
    const valueEnd = bytes.indexOf(0, offset + 1);
    fields[code] = bytes.toString('utf8', offset + 1, valueEnd);
    offset = valueEnd + 1;
  }
  const error = new messages.DatabaseError(fields.M ?? 'unknown error', length, 'error');
  for (const [code, value] of Object.entries(fields)) {
    const name = ERROR_FIELDS[code];
    if (name) (error as unknown as Record<string, string>)[name] = value;
  }
  return error;
}
