import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { singleWriterLock } from './lock';

// node-postgres returns int8 as strings, PGlite as numbers; ledger positions stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type SqlKind = 'pg' | 'pglite';

/** One PostgreSQL database (a server through `pg`, or PGlite in-process) behind kysely. */
export interface SqlDatabase {
  readonly kind: SqlKind;
  readonly db: Kysely<any>;
  /** LISTEN on a channel; returns the unlisten function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres://... ; unset = PGlite under `dataDir/pglite`. */
  url?: string;
  dataDir: string;
  poolSize?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<SqlDatabase> {
  return options.url ? openPostgres(options.url, options) : openPGlite(options.dataDir);
}

function openPostgres(url: string, options: OpenDatabaseOptions): SqlDatabase {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, application_name: options.applicationName });
  // An idle client that errors (e.g. the server restarted) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  const listeners: pg.Client[] = [];
  return {
    kind: 'pg',
    db,
    async listen(channel, onPayload) {
      const client = new pg.Client({ connectionString: url, application_name: options.applicationName });
      client.on('error', () => undefined);
      client.on('notification', (message) => {
        if (message.channel === channel) onPayload(message.payload ?? '');
      });
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
      listeners.push(client);
      return async () => {
        listeners.splice(listeners.indexOf(client), 1);
        await client.end().catch(() => undefined);
      };
    },
    async close() {
      await Promise.all(listeners.splice(0).map((c) => c.end().catch(() => undefined)));
      await db.destroy();
    },
  };
}

/**
 * PGlite is one process's database: a second process opening the same files would keep its own
 * ledger head and fork the chain.
 */
function lockDataDir(dataDir: string): () => void {
  return singleWriterLock(
    path.join(dataDir, 'pglite.lock'),
    (holder) =>
      `the embedded database in ${dataDir} is in use by process ${holder}; it has one writer. ` +
      'Stop that process, use another DATA_DIR, or set DATABASE_URL to run several processes.',
  );
}

async function openPGlite(dataDir: string): Promise<SqlDatabase> {
  const dir = path.join(dataDir, 'pglite');
  fs.mkdirSync(dir, { recursive: true });
  const unlock = lockDataDir(dataDir);
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGliteDialect } = await import('kysely-pglite-dialect');
  // Search's substring indexes are trigram indexes; a PostgreSQL server has pg_trgm in its contrib.
  // (A subpath export, which this project's node10 module resolution cannot type.)
  const { pg_trgm } = (await import('@electric-sql/pglite/contrib/pg_trgm' as string)) as { pg_trgm: import('@electric-sql/pglite').Extension };
  let client: Awaited<ReturnType<typeof PGlite.create>>;
  try {
    client = await PGlite.create(dir, { extensions: { pg_trgm } });
  } catch (error) {
    unlock();
    throw error;
  }
  const db = new Kysely<any>({ dialect: new PGliteDialect(client) });
  return {
    kind: 'pglite',
    db,
    async listen(channel, onPayload) {
      const unlisten = await client.listen(channel, onPayload);
      return async () => unlisten();
    },
    async close() {
      await db.destroy();
      unlock();
    },
  };
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a safe identifier: ${name}`);
  return `"${name}"`;
}

export async function ping(database: SqlDatabase): Promise<void> {
  await sql`select 1`.execute(database.db);
}
