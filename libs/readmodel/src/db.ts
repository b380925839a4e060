import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { singleWriterLock } from './lock';

// node-postgres returns int8 as strings, PGlite as numbers; ledger positions stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type SqlKind = 'pg' | 'pglite';

/** How soon a LISTEN connection that was cut is opened again. */
const RELISTEN_MS = 500;

/** One PostgreSQL database (a server through `pg`, or PGlite in-process) behind kysely. */
export interface SqlDatabase {
  readonly kind: SqlKind;
  readonly db: Kysely<any>;
  /** The server's connection string (pg only): for work that opens its own connection, such as a worker thread. */
  readonly url?: string;
  /**
   * LISTEN on a channel; returns the unlisten function. `onListening` hears when the subscription is lost
   * (false) and when it is back (true): a notification sent in between was missed.
   */
  listen(channel: string, onPayload: (payload: string) => void, onListening?: (listening: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres://... ; unset = PGlite under `dataDir/pglite`. */
  url?: string;
  dataDir: string;
  poolSize?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
  /** Bounds on waiting for a PostgreSQL server (PGlite has no server to wait for); unset = none. */
  timeouts?: DatabaseTimeouts;
}

/**
 * How long a serving process waits on a PostgreSQL server before failing instead of hanging; 0 = no bound.
 * Work that is expected to run long lifts the session's bounds in its transaction (`liftTimeouts`).
 */
export interface DatabaseTimeouts {
  /** For a pooled connection: a free one, or a new one to open. */
  connectMs: number;
  /** `statement_timeout`: also bounds a statement's wait for a lock. */
  statementMs: number;
  /** `idle_in_transaction_session_timeout`: a transaction left open releases its locks. */
  idleInTransactionMs: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<SqlDatabase> {
  return options.url ? openPostgres(options.url, options) : openPGlite(options.dataDir);
}

function openPostgres(url: string, options: OpenDatabaseOptions): SqlDatabase {
  const timeouts = options.timeouts;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: timeouts?.connectMs,
    statement_timeout: timeouts?.statementMs,
    idle_in_transaction_session_timeout: timeouts?.idleInTransactionMs,
  });
  // An idle client that errors (e.g. the server restarted) must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // The pool listens for errors only on idle clients: a connection cut while checked out between two queries
  // (inside a transaction) would otherwise emit an unhandled 'error' and end the process. Its query fails instead.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  const listeners = new Set<() => Promise<void>>();
  return {
    kind: 'pg',
    db,
    url,
    async listen(channel, onPayload, onListening) {
      let client: pg.Client | undefined;
      let retry: NodeJS.Timeout | undefined;
      let stopped = false;
      // A cut connection is replaced; meanwhile the listener's own fallback poll covers what it missed.
      const relisten = () => {
        if (stopped || retry) return;
        retry = setTimeout(() => {
          retry = undefined;
          connect().catch(relisten);
        }, RELISTEN_MS);
      };
      const connect = async () => {
        const next = new pg.Client({ connectionString: url, application_name: options.applicationName, connectionTimeoutMillis: timeouts?.connectMs });
        const lost = () => {
          if (client !== next) return;
          client = undefined;
          next.end().catch(() => undefined);
          onListening?.(false);
          relisten();
        };
        next.on('error', lost);
        next.on('end', lost);
        next.on('notification', (message) => {
          if (message.channel === channel) onPayload(message.payload ?? '');
        });
        client = next;
        try {
          await next.connect();
          await next.query(`LISTEN ${quoteIdent(channel)}`);
          if (client === next) onListening?.(true);
        } catch (error) {
          if (client === next) client = undefined;
          next.end().catch(() => undefined);
          throw error;
        }
      };
      try {
        await connect();
      } catch (error) {
        stopped = true;
        clearTimeout(retry);
        throw error;
      }
      const unlisten = async () => {
        stopped = true;
        clearTimeout(retry);
        listeners.delete(unlisten);
        const last = client;
        client = undefined;
        await last?.end().catch(() => undefined);
      };
      listeners.add(unlisten);
      return unlisten;
    },
    async close() {
      await Promise.all([...listeners].map((unlisten) => unlisten()));
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
  // The data directory holds the ledger and, unless SERVICE_MASTER_KEY is set, the master key: its owner's alone.
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
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
    async listen(channel, onPayload, onListening) {
      const unlisten = await client.listen(channel, onPayload);
      // One process's own database: the subscription cannot be cut.
      onListening?.(true);
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

/**
 * Lifts the session's statement and idle-in-transaction bounds until `trx` ends, for work that is expected to
 * run long (migrations, index builds, storing the whole decision state) on a pool that serves requests.
 */
export async function liftTimeouts(trx: Kysely<any>): Promise<void> {
  await sql`set local statement_timeout = 0`.execute(trx);
  await sql`set local idle_in_transaction_session_timeout = 0`.execute(trx);
}

export async function ping(database: SqlDatabase): Promise<void> {
  await sql`select 1`.execute(database.db);
}
