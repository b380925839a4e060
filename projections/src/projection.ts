import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { EntryOf, LedgerEventType } from '@svc/domain';
import type { LedgerEntry } from '@svc/ledger';
import type { Migration } from '@svc/readmodel';

/** An entry as the projector read it: parsed, and the exact bytes the event store keeps. */
export interface ProjectedEntry<E extends LedgerEntry = LedgerEntry> {
  entry: E;
  bytes: string;
}

export interface ApplyOptions {
  /**
   * A rebuild loading a fresh schema: figures derived from many rows (counts, karma) are left to `settle`,
   * which the rebuild runs once after the last batch, instead of being recounted for every batch.
   */
  bulk?: boolean;
  /**
   * A rebuild's bulk load on a PostgreSQL server: writes rows to a table that none of them can conflict with
   * (see insertNew), by COPY.
   */
  copy?: CopyRows;
}

/** Writes rows to a table by COPY: the rows and the columns they fill, typed as for insertRows. */
export type CopyRows = <R extends object>(table: string, rows: readonly R[], columns: { [K in keyof R]: ColumnType }) => Promise<void>;

/** One read model: the events it cares about, how its rows change for a batch of them, and its migrations. */
export interface Projection {
  name: string;
  migrations: Migration[];
  /** Event types applied; `'*'` is every entry. */
  canHandle: readonly string[] | '*';
  /**
   * Applies the entries of one batch that this projection handles, in seq order, inside the batch's
   * transaction. Must be idempotent: a batch replayed after a crash applies again to the same rows.
   */
  apply(trx: Kysely<any>, schema: string, entries: ProjectedEntry[], options?: ApplyOptions): Promise<void>;
  /** Derives from the rows every figure that `apply` in bulk left out, to what batch by batch would have made them. */
  settle?(trx: Kysely<any>, schema: string): Promise<void>;
}

/** A read model of the event types it names, as `defineProjection` takes it. */
export interface TypedProjection<T extends LedgerEventType> extends Omit<Projection, 'canHandle' | 'apply'> {
  canHandle: readonly T[];
  /** As Projection.apply, given only entries of the types named, each typed by its `type`. */
  apply(trx: Kysely<any>, schema: string, entries: ProjectedEntry<EntryOf<T>>[], options?: ApplyOptions): Promise<void>;
}

/**
 * A read model that reads the data of the events it names: its `apply` is given those entries typed, so a switch over
 * `entry.type` narrows `entry.data`. An entry of a type a newer build added is never among them.
 */
export function defineProjection<T extends LedgerEventType>(definition: TypedProjection<T>): Projection {
  const types: ReadonlySet<string> = new Set(definition.canHandle);
  const isHandled = (projected: ProjectedEntry): projected is ProjectedEntry<EntryOf<T>> => types.has(projected.entry.type);
  return { ...definition, apply: (trx, schema, entries, options) => definition.apply(trx, schema, entries.filter(isHandled), options) };
}

export function handles(projection: Projection, type: string): boolean {
  return projection.canHandle === '*' || projection.canHandle.includes(type);
}

export type ColumnType = 'text' | 'bigint' | 'integer' | 'smallint' | 'double precision' | 'boolean' | 'numeric' | 'jsonb';

/** A JSON escape of a lone surrogate, or something that ends like one; rare enough to check for after the fact. */
const LONE_SURROGATE = /\\u[dD][89a-fA-F]/;

/**
 * One column's values as a JSON array. A lone surrogate becomes U+FFFD, as UTF-8 encoding a bound text
 * parameter would make it, where PostgreSQL would refuse its JSON escape.
 */
function jsonArray(values: unknown[]): string {
  const text = JSON.stringify(values);
  if (!LONE_SURROGATE.test(text)) return text;
  return JSON.stringify(values.map((v) => (typeof v === 'string' ? (v as string & { toWellFormed(): string }).toWellFormed() : v)));
}

/**
 * Rows as a set for one statement, `(select ...) as <alias>`: each column travels as one JSON array parameter
 * (serialized natively, unlike a driver's array literal) and `rows from` zips them back into rows, so a
 * statement costs the same few parameters whatever the number of rows.
 */
export function unnestRows<R extends object>(rows: readonly R[], columns: { [K in keyof R]: ColumnType }, alias = 'r'): RawBuilder<unknown> {
  const names = Object.keys(columns) as Array<keyof R & string>;
  const sources = names.map((name) => sql`json_array_elements_text(${jsonArray(rows.map((row) => row[name] ?? null))}::json)`);
  const casts = names.map((name) => `"${name}"::${columns[name]} as "${name}"`).join(', ');
  return sql`(select ${sql.raw(casts)} from rows from (${sql.join(sources)}) as c(${sql.raw(names.map((name) => `"${name}"`).join(', '))})) as ${sql.raw(alias)}`;
}

/** `insert into <table> (<columns>) select ... from <rows>`, to be followed by its ON CONFLICT clause. */
export function insertRows<R extends object>(table: string, rows: readonly R[], columns: { [K in keyof R]: ColumnType }): RawBuilder<unknown> {
  const names = Object.keys(columns).join(', ');
  return sql`insert into ${sql.raw(table)} (${sql.raw(names)}) select ${sql.raw(names)} from ${unnestRows(rows, columns)}`;
}

/**
 * Rows new to their table: by COPY in a rebuild's bulk load on a server (ApplyOptions.copy), else one INSERT
 * followed by `onConflict`. Only for rows no other row of the ledger can conflict with (one per entry, or per
 * id the ledger writer keeps unique): a bulk load applies each batch once into an empty schema, so there,
 * the conflict clause that makes a batch idempotent has nothing to do.
 */
export async function insertNew<R extends object>(
  trx: Kysely<any>,
  table: string,
  rows: readonly R[],
  columns: { [K in keyof R]: ColumnType },
  onConflict: RawBuilder<unknown>,
  options: ApplyOptions | undefined,
): Promise<void> {
  if (rows.length === 0) return;
  if (options?.copy) return options.copy(table, rows, columns);
  await sql`${insertRows(table, rows, columns)} ${onConflict}`.execute(trx);
}

/** A value in COPY's text format: backslash escapes for the characters that delimit, `\N` for null. */
function copyValue(value: unknown, type: ColumnType): string {
  if (value === null || value === undefined) return '\\N';
  if (type === 'boolean') return value ? 't' : 'f';
  const text = String(value);
  return /[\\\n\r\t]/.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!) : text;
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Rows as the body of `COPY table (columns) FROM STDIN` in text format. Numbers print as they would in a JSON
 * array, so a double reaches the column exactly as through insertRows; encoding the text as UTF-8 makes a lone
 * surrogate U+FFFD, as a bound parameter would.
 */
export function copyText<R extends object>(rows: readonly R[], columns: { [K in keyof R]: ColumnType }): string {
  const names = Object.keys(columns) as Array<keyof R & string>;
  let out = '';
  for (const row of rows) out += names.map((name) => copyValue(row[name], columns[name])).join('\t') + '\n';
  return out;
}
