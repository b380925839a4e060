import type { Config } from '@svc/config';
import { EsdbEventStore, PostgresEventStore, type EventStore } from '@svc/ledger';
import { openDatabase, type DatabaseTimeouts, type SqlDatabase } from '@svc/readmodel';

/** The bounds a serving process (API, projector, workers) puts on its waits for a PostgreSQL server. */
export function servingTimeouts(config: Config): DatabaseTimeouts {
  return {
    connectMs: config.databaseConnectTimeoutMs,
    statementMs: config.databaseStatementTimeoutMs,
    idleInTransactionMs: config.databaseIdleInTransactionTimeoutMs,
  };
}

/** Whether the ledger is kept apart from the read database: in EventStoreDB, or in another PostgreSQL. */
export function eventStoreIsSeparate(config: Config): boolean {
  return config.eventstoreUrl !== undefined && config.eventstoreUrl !== config.databaseUrl;
}

/** Opens the event store named by the configuration: EventStoreDB, another PostgreSQL, or the read-model database. */
export async function openEventStore(config: Config, database: SqlDatabase, timeouts?: DatabaseTimeouts): Promise<{ store: EventStore; extra?: SqlDatabase }> {
  const url = config.eventstoreUrl;
  if (url === undefined || !eventStoreIsSeparate(config)) return { store: await new PostgresEventStore(database).init() };
  if (/^(esdb|kurrentdb|kurrent|esdb\+discover):\/\//.test(url)) return { store: new EsdbEventStore(url) };
  if (/^postgres(ql)?:\/\//.test(url)) {
    const extra = await openDatabase({ url, dataDir: config.dataDir, applicationName: 'svc-eventstore', timeouts });
    return { store: await new PostgresEventStore(extra).init(), extra };
  }
  throw new Error(`EVENTSTORE_URL must be esdb://... or postgres://..., got ${url}`);
}

/** The read database (read models, vault, snapshots) and the event store: all that the projector and the replay tool need. */
export interface Storage {
  database: SqlDatabase;
  store: EventStore;
  close(): Promise<void>;
}

export interface StorageOptions {
  /**
   * Bound the waits on a PostgreSQL server (`servingTimeouts`), so a request fails instead of hanging. Left
   * unset by the replay and the tools, whose rebuilds and bulk loads run long by design.
   */
  serving?: boolean;
}

/**
 * Opens the database first: with PGlite that takes the data directory's lock, so a second process on the
 * same files is refused before it touches anything else.
 */
export async function openStorage(config: Config, applicationName: string, options: StorageOptions = {}): Promise<Storage> {
  const timeouts = options.serving ? servingTimeouts(config) : undefined;
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, applicationName, timeouts });
  let opened: { store: EventStore; extra?: SqlDatabase };
  try {
    opened = await openEventStore(config, database, timeouts);
  } catch (error) {
    await database.close();
    throw error;
  }
  const { store, extra } = opened;
  return {
    database,
    store,
    async close() {
      await store.close();
      await extra?.close();
      await database.close();
    },
  };
}
