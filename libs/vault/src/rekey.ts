import { sql, type Kysely } from 'kysely';
import type { SqlDatabase } from '@svc/readmodel';
import { DoorbellSeals } from './doorbells/seals';
import { idempotencyContext } from './idempotency';
import type { KeyPurpose, Keyring } from './keyring';

/** A column sealed under the master key, and how its row binds it (the context of its associated data). */
interface SealedColumn {
  column: string;
  purpose: KeyPurpose;
  context(row: Row): string;
}

type Row = Record<string, string | null>;

/** A vault table holding sealed values: its key columns, the sealed ones, and what else moves with them. */
interface SealedTable {
  name: string;
  key: string[];
  columns: SealedColumn[];
  /** Columns to read besides the key and the sealed ones. */
  extra?: string[];
  /** Values other than the sealed ones that are keyed by the master key (a keyed hash), from the opened values. */
  derived?(row: Row, opened: Map<string, Buffer>, keys: Keyring): Record<string, string>;
}

/** Every place the master key seals something (memory notes are sealed under the citizens' API keys instead). */
const SEALED_TABLES: SealedTable[] = [
  { name: 'wallet_secrets', key: ['agent_id'], columns: [{ column: 'sealed', purpose: 'wallet', context: (r) => `wallet:${r.agent_id}` }] },
  { name: 'service_wallets', key: ['name'], columns: [{ column: 'sealed', purpose: 'service-wallet', context: (r) => `service-wallet:${r.name}` }] },
  {
    name: 'doorbells',
    key: ['id'],
    extra: ['agent_id'],
    columns: [
      { column: 'url_sealed', purpose: 'doorbell', context: (r) => `doorbell-url:${r.id}` },
      { column: 'secret_sealed', purpose: 'doorbell', context: (r) => `doorbell:${r.id}` },
    ],
    derived: (row, opened, keys) => ({ url_hash: new DoorbellSeals(keys).urlHash(row.agent_id!, opened.get('url_sealed')!.toString('utf8')) }),
  },
  {
    name: 'idempotency_keys',
    key: ['scope', 'key'],
    columns: ['response', 'response_without_secrets'].map((column) => ({ column, purpose: 'idempotency' as const, context: (r: Row) => idempotencyContext(r.scope!, r.key!) })),
  },
];

export interface RekeyProgress {
  table: string;
  resealed: number;
}

export interface RekeyOutcome {
  /** Rows sealed again, per table. */
  resealed: Record<string, number>;
  /** Rows a concurrent writer changed between the read and the write; the next run takes them. */
  raced: number;
  /** Sealed again until stopped by `limit`: a later run goes on from there. */
  complete: boolean;
}

export interface RekeyOptions {
  /** Rows per transaction. */
  batch?: number;
  /** Stop after this many rows (a run in pieces; the next run goes on). */
  limit?: number;
  onProgress?(progress: RekeyProgress): void;
}

/**
 * Seals every value of the vault that is not under `keys`' current master key again under it. Needs the keys the
 * values are under now in `keys` too. Each batch commits on its own and only rows not yet under the current key are
 * read, so a run that stops (or is stopped) is taken up by the next. A row changed meanwhile is left as it is.
 */
export async function rekeyVault(database: SqlDatabase, keys: Keyring, schema = 'vault', options: RekeyOptions = {}): Promise<RekeyOutcome> {
  const batch = options.batch ?? 500;
  let budget = options.limit ?? Number.POSITIVE_INFINITY;
  const outcome: RekeyOutcome = { resealed: {}, raced: 0, complete: true };
  for (const table of SEALED_TABLES) {
    outcome.resealed[table.name] = 0;
    if (!(await tableExists(database.db, schema, table.name))) continue;
    let after: string[] | undefined;
    for (;;) {
      if (budget <= 0) {
        outcome.complete = false;
        return outcome;
      }
      const rows = await staleRows(database.db, schema, table, keys, after, Math.min(batch, budget));
      if (rows.length === 0) break;
      const written = await resealRows(database.db, schema, table, keys, rows);
      outcome.resealed[table.name] += written;
      outcome.raced += rows.length - written;
      budget -= rows.length;
      after = table.key.map((k) => rows[rows.length - 1]![k]!);
      options.onProgress?.({ table: table.name, resealed: outcome.resealed[table.name]! });
    }
  }
  return outcome;
}

async function tableExists(db: Kysely<any>, schema: string, name: string): Promise<boolean> {
  const found = await sql`select 1 from information_schema.tables where table_schema = ${schema} and table_name = ${name}`.execute(db);
  return found.rows.length > 0;
}

const ident = (name: string) => sql.id(name);

/** The next rows, in key order after `after`, with a sealed value not under the current key. */
async function staleRows(db: Kysely<any>, schema: string, table: SealedTable, keys: Keyring, after: string[] | undefined, limit: number): Promise<Row[]> {
  const current = `v2.${keys.kid}.%`;
  const columns = [...table.key, ...(table.extra ?? []), ...table.columns.map((c) => c.column)];
  const stale = sql.join(table.columns.map((c) => sql`(${ident(c.column)} is not null and ${ident(c.column)} not like ${current})`), sql` or `);
  const keyTuple = sql`(${sql.join(table.key.map(ident))})`;
  const past = after ? sql`and ${keyTuple} > (${sql.join(after)})` : sql``;
  const result = await sql<Row>`
    select ${sql.join(columns.map(ident))} from ${sql.table(`${schema}.${table.name}`)}
     where (${stale}) ${past}
     order by ${sql.join(table.key.map(ident))} limit ${limit}`.execute(db);
  return result.rows;
}

/** The row's new values: each sealed one under the current key, and what is keyed with them. */
function resealed(table: SealedTable, keys: Keyring, row: Row): Record<string, string | null> {
  const opened = new Map<string, Buffer>();
  const changes: Record<string, string | null> = {};
  for (const { column, purpose, context } of table.columns) {
    const sealed = row[column] ?? null;
    if (sealed === null) {
      changes[column] = null;
      continue;
    }
    const plain = keys.unseal(purpose, sealed, context(row));
    opened.set(column, plain);
    changes[column] = keys.isCurrent(sealed) ? sealed : keys.seal(purpose, plain, context(row));
  }
  return { ...changes, ...table.derived?.(row, opened, keys) };
}

/**
 * One UPDATE for the batch, from a VALUES list of (key, old sealed values, new values): a row whose sealed values
 * changed since they were read (a concurrent write) is left alone. How many rows it sealed again.
 */
async function resealRows(db: Kysely<any>, schema: string, table: SealedTable, keys: Keyring, rows: Row[]): Promise<number> {
  const changed = rows.map((row) => resealed(table, keys, row));
  const newColumns = Object.keys(changed[0]!);
  const oldColumns = table.columns.map((c) => c.column);
  const names = [...table.key.map((k) => `k_${k}`), ...oldColumns.map((c) => `old_${c}`), ...newColumns.map((c) => `new_${c}`)];
  const tuples = rows.map((row, i) => {
    const values = [...table.key.map((k) => row[k]), ...oldColumns.map((c) => row[c]), ...newColumns.map((c) => changed[i]![c])];
    return sql`(${sql.join(values.map((v) => sql`${v ?? null}::text`))})`;
  });
  const sets = sql.join(newColumns.map((c) => sql`${ident(c)} = v.${ident(`new_${c}`)}`));
  const where = sql.join(
    [...table.key.map((k) => sql`t.${ident(k)} = v.${ident(`k_${k}`)}`), ...oldColumns.map((c) => sql`t.${ident(c)} is not distinct from v.${ident(`old_${c}`)}`)],
    sql` and `,
  );
  const result = await sql`
    update ${sql.table(`${schema}.${table.name}`)} as t set ${sets}
      from (values ${sql.join(tuples)}) as v(${sql.join(names.map(ident))})
     where ${where}`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
