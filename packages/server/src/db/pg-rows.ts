import pg from 'pg';
import { parseTimestamptz } from './timestamps.js';

/** int8 as `bigint`: every id and minor-unit amount past 2^53 stays exact. */
export const parseInt8 = (value: string) => BigInt(value);

/** The types `pg` reads our way: int8 as `bigint`, timestamptz by its ISO form (db/timestamps.ts). */
const OWN_PARSERS = new Map<number, (value: string) => unknown>([
  [pg.types.builtins.INT8, parseInt8],
  [pg.types.builtins.TIMESTAMPTZ, parseTimestamptz],
]);

/** The parser of a column of type `oid` sent as text: ours where we read it our way, else pg's. */
export const typeParser = ((oid: number, format?: string) =>
  OWN_PARSERS.get(oid) ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser;

/** One statement's columns as its RowDescription gave them, with each value's parser. */
interface Columns {
  readonly fields: readonly pg.FieldDef[];
  readonly names: readonly string[];
  readonly parsers: readonly ((value: string) => unknown)[];
  /**
   * A row of this statement with every column null: each row starts as its copy, so that every
   * row of a statement has one shape, its columns in the object itself (V8 copies such an object
   * by its shape, where properties added one by one grow a separate store as they come).
   */
  readonly template: Readonly<Record<string, null>>;
}

/**
 * The columns of each statement, by its name (a prepared statement) or its text: a statement
 * answers with the same columns every time, so they are read once instead of once per answer.
 * Checked against every RowDescription all the same (a migration may change a table's columns).
 * Bounded by the statements the code names; a text built per call would grow it, so such
 * statements (several of which exist outside the hot paths) are not kept past MAX_KEPT.
 */
const kept = new Map<string, Columns>();
const MAX_KEPT = 1_000;

function sameColumns(known: readonly pg.FieldDef[], given: readonly pg.FieldDef[]): boolean {
  if (known.length !== given.length) return false;
  for (let i = 0; i < given.length; i++) {
    const a = known[i] as pg.FieldDef;
    const b = given[i] as pg.FieldDef;
    if (a.name !== b.name || a.dataTypeID !== b.dataTypeID || a.format !== b.format) return false;
  }
  return true;
}

function columnsOf(key: string, fields: readonly pg.FieldDef[]): Columns {
  const known = kept.get(key);
  if (known && sameColumns(known.fields, fields)) return known;
  const columns: Columns = {
    fields,
    names: fields.map((field) => field.name),
    parsers: fields.map((field) => typeParser(field.dataTypeID, field.format as 'text' | 'binary')),
    template: Object.fromEntries(fields.map((field) => [field.name, null])),
  };
  if (kept.size < MAX_KEPT || known) kept.set(key, columns);
  return columns;
}

/** The column names kept for a statement's name or text, if its rows were read here. */
export const keptColumns = (key: string): readonly string[] | undefined => kept.get(key)?.names;

/** What pg's connection hands a query for a RowDescription and a DataRow (pg-protocol's messages). */
interface RowDescription {
  readonly fields: pg.FieldDef[];
}
interface DataRow {
  readonly fields: (string | null)[];
}

/**
 * A statement whose rows go into the caller's array as they arrive, read with its kept columns (see
 * `columnsOf`): pg's own Query builds its template row again for every answer (`addFields`: a
 * dictionary object and its copy, 8.5–11 µs for 20 columns on 2026-12-02), then copies it per
 * row, emits each row as an event and keeps it twice; here the template is built once per
 * statement. The same rows (text columns only: the platform asks for no binary results), the
 * same errors: a value that fails to parse fails the statement, as in pg.
 *
 * The callback gets pg's result, whose own `rows` stay empty: its row count and command are pg's.
 * The array is not called `rows`: pg's Query reads `this.rows` as the rows to fetch per portal
 * execution, and a query with it set neither syncs after an error nor runs as one simple query.
 */
export class CollectingQuery<T> extends pg.Query {
  /** pg's own: an error met while reading a row, reported when the statement ends. */
  declare _canceledDueToError: unknown;
  private columns: Columns | undefined;

  constructor(
    config: pg.QueryConfig,
    private readonly into: T[],
    callback: (error: Error | undefined, result: pg.ResultBuilder) => void,
  ) {
    super(config, callback);
  }

  /** pg's handler (Submittable): the columns, kept per statement. */
  handleRowDescription(message: RowDescription): void {
    const self = this as unknown as { name?: string; text?: string };
    this.columns = columnsOf(self.name ?? self.text ?? '', message.fields);
  }

  /** pg's handler (Submittable): one row, by the statement's columns. */
  handleDataRow(message: DataRow): void {
    if (this._canceledDueToError) return;
    const columns = this.columns;
    if (!columns) return;
    const { names, parsers, template } = columns;
    const values = message.fields;
    const row: Record<string, unknown> = { ...template };
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        row[names[i] as string] =
          value === null || value === undefined ? null : (parsers[i] as (v: string) => unknown)(value);
      }
    } catch (error) {
      this._canceledDueToError = error;
      return;
    }
    this.into.push(row as T);
  }
}
