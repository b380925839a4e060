import { Kysely, sql } from 'kysely';
import { liftTimeouts, quoteIdent } from './db';

/** A schema migration; `schema` is passed in so a read model can be built side by side under another name. */
export interface Migration {
  name: string;
  up(db: Kysely<any>, schema: string): Promise<void>;
}

/**
 * Applies the migrations not yet recorded in `<schema>.migrations`, in order, each in its own transaction.
 * A transaction-scoped advisory lock keeps two processes starting at once from racing. An index build or a
 * wait for another process's migrations may take longer than a serving pool lets a statement run.
 */
export async function migrate(db: Kysely<any>, schema: string, migrations: readonly Migration[]): Promise<string[]> {
  const applied: string[] = [];
  const s = quoteIdent(schema);
  await db.transaction().execute(async (trx) => {
    await liftTimeouts(trx);
    await sql`select pg_advisory_xact_lock(hashtext(${'migrate:' + schema}))`.execute(trx);
    await sql.raw(`create schema if not exists ${s}`).execute(trx);
    await sql.raw(`create table if not exists ${s}.migrations (name text primary key, applied_at timestamptz not null default now())`).execute(trx);
    const done = await sql<{ name: string }>`select name from ${sql.raw(s)}.migrations`.execute(trx);
    const seen = new Set(done.rows.map((r) => r.name));
    for (const migration of migrations) {
      if (seen.has(migration.name)) continue;
      await migration.up(trx, schema);
      await sql`insert into ${sql.raw(s)}.migrations (name) values (${migration.name})`.execute(trx);
      applied.push(migration.name);
    }
  });
  return applied;
}

/** A migration that runs plain SQL statements, written for the schema it is given. */
export function sqlMigration(name: string, statements: (schema: string) => string[]): Migration {
  return { name, up: (db, schema) => execAll(db, statements(schema)) };
}

/** Runs each statement separately: PGlite's extended protocol takes one statement per query. */
export async function execAll(db: Kysely<any>, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
