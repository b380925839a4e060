import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Bus } from '@svc/bus';
import { LEDGER_STREAM, type EventStore, type LedgerEntry, type StoredEvent } from '@svc/ledger';
import { migrate, quoteIdent, type SqlDatabase } from '@svc/readmodel';
import { ensureCheckpoints, lockCheckpoints, readCheckpoint, readCheckpoints, writeCheckpoint } from './checkpoints';
import { copyText, handles, type CopyRows, type ProjectedEntry, type Projection } from './projection';
import { Projector, readModelMigrations } from './projector';

/** Ledger entries per batch of a rebuild's load: enough that a batch's statements cost, not their round trips. */
export const REBUILD_BATCH = 20_000;

/** Connections a bulk load and the index builds use at once on a PostgreSQL server (PGlite has one). */
export const REBUILD_CONNECTIONS = 3;
const PARALLEL = REBUILD_CONNECTIONS;

/** What a rebuild is doing: loading rows, deriving figures and building indexes, applying what came meanwhile, swapping. */
export type RebuildPhase = 'load' | 'index' | 'tail' | 'swap';

/** The indexes that no ON CONFLICT needs: built once over the loaded rows rather than kept row by row. */
async function dropSecondaryIndexes(db: Kysely<any>, schema: string): Promise<string[]> {
  const found = await sql<{ name: string; definition: string }>`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
    from pg_index i
    join pg_class c on c.oid = i.indexrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and not i.indisunique and not i.indisprimary
    order by c.relname`.execute(db);
  // Trigram indexes take longest to build: they start first.
  found.rows.sort((a, b) => Number(b.definition.includes('USING gin')) - Number(a.definition.includes('USING gin')));
  for (const { name } of found.rows) await sql.raw(`drop index ${quoteIdent(schema)}.${quoteIdent(name)}`).execute(db);
  return found.rows.map((r) => r.definition);
}

/** COPY on a connection of its own, committed without waiting for the disk, as the rest of a bulk load. */
async function copyConnection(url: string): Promise<{ copy: CopyRows; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url, application_name: 'svc-rebuild' });
  // A cut connection fails the COPY under way; the event itself must not end the process.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('set synchronous_commit = off');
  return {
    copy: async (table, rows, columns) => {
      const names = Object.keys(columns).join(', ');
      await pipeline(Readable.from([copyText(rows, columns)]), client.query(copyFrom(`copy ${table} (${names}) from stdin`)));
    },
    close: () => client.end(),
  };
}

/** Runs `work` over `items`, at most `limit` at a time; after a failure, starts no more. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < items.length && !failed) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * Applies the ledger from the schema's checkpoint to the head as it was when called, as the projector would
 * but in bulk (see rebuildReadModels): each batch's projections in a few transactions at once, while the next
 * batch is read. The checkpoint moves once a batch is applied by all of them; it only tells how
 * far the load got, since a load that stopped half-way is dropped, never resumed.
 */
async function loadInBulk(options: {
  database: SqlDatabase;
  store: EventStore;
  projections: Projection[];
  schema: string;
  batchSize: number;
  onProgress?: (seq: number) => void;
}): Promise<void> {
  const parallel = options.database.kind === 'pg' ? PARALLEL : 1;
  const url = options.database.kind === 'pg' ? options.database.url : undefined;
  // Rows new to their table go by COPY, a connection per lane, beside the lane's transaction for the rest.
  const copies = url ? await Promise.all(Array.from({ length: parallel }, () => copyConnection(url))) : [];
  try {
    await loadBatches(options, parallel, copies.map((c) => c.copy));
  } finally {
    await Promise.all(copies.map((c) => c.close().catch(() => undefined)));
  }
}

/** Batches read and parsed ahead of the slowest projection's apply. */
const BATCHES_AHEAD = 2;

/**
 * Each projection applies the batches in order, in a transaction per batch, and runs ahead of the others
 * (up to BATCHES_AHEAD batches): projections write tables of their own and, loading, read no other's, so only
 * the checkpoint waits for all.
 * At most `copies.length || 1` applies run at once, each with a COPY connection of its own.
 */
async function loadBatches(
  options: { database: SqlDatabase; store: EventStore; projections: Projection[]; schema: string; batchSize: number; onProgress?: (seq: number) => void },
  parallel: number,
  copies: CopyRows[],
): Promise<void> {
  const { db } = options.database;
  const free: Array<CopyRows | undefined> = copies.length > 0 ? [...copies] : Array.from({ length: parallel }, () => undefined);
  const waiting: Array<() => void> = [];
  const apply = async (projection: Projection, mine: ProjectedEntry[]) => {
    while (free.length === 0) await new Promise<void>((resolve) => waiting.push(resolve));
    const copy = free.pop();
    try {
      await db.transaction().execute(async (trx) => {
        await sql`set local synchronous_commit = off`.execute(trx);
        await projection.apply(trx, options.schema, mine, { bulk: true, copy });
      });
    } finally {
      free.push(copy);
      waiting.shift()?.();
    }
  };
  const read = (from: number) => {
    const reading = options.store.readForward(LEDGER_STREAM, from, options.batchSize);
    // Awaited below, unless applying the batch before it failed first.
    reading.catch(() => undefined);
    return reading;
  };
  const chains = new Map<Projection, Promise<void>>();
  const inFlight: Array<Promise<void>> = [];
  let checkpointed: Promise<void> = Promise.resolve();
  const names = options.projections.map((p) => p.name);
  let at = await readCheckpoint(db, options.schema, names);
  let next = read(at + 1);
  try {
    for (;;) {
      const batch: StoredEvent[] = await next;
      const full = batch.length === options.batchSize;
      if (full) next = read(batch[batch.length - 1]!.revision + 1);
      if (batch.length === 0) break;
      const parsed: ProjectedEntry[] = batch.map((e) => ({ entry: JSON.parse(e.data) as LedgerEntry, bytes: e.data }));
      if (parsed[0]!.entry.seq !== at + 1) throw new Error(`gap: checkpoint ${at}, next entry ${parsed[0]!.entry.seq}`);
      at = parsed[parsed.length - 1]!.entry.seq;
      const applied = options.projections.flatMap((projection) => {
        const mine = parsed.filter((p) => handles(projection, p.entry.type));
        if (mine.length === 0) return [];
        const run = (chains.get(projection) ?? Promise.resolve()).then(() => apply(projection, mine));
        chains.set(projection, run);
        return [run];
      });
      const last = at;
      checkpointed = Promise.all([checkpointed, ...applied]).then(async () => {
        await writeCheckpoint(db, options.schema, names, last);
        options.onProgress?.(last);
      });
      // A failure is thrown by the await below or by the last one; meanwhile it must not go unhandled.
      checkpointed.catch(() => undefined);
      inFlight.push(checkpointed);
      if (inFlight.length > BATCHES_AHEAD) await inFlight.shift();
      if (!full) break;
    }
    await checkpointed;
  } finally {
    // Nothing may still be writing when the connections close, even after a failure.
    await Promise.allSettled([...chains.values(), checkpointed]);
  }
}

export interface RebuildOptions {
  database: SqlDatabase;
  store: EventStore;
  projections: Projection[];
  /** The live schema. */
  schema: string;
  bus?: Bus;
  batchSize?: number;
  onProgress?: (seq: number) => void;
  onPhase?: (phase: RebuildPhase) => void;
}

/**
 * Builds the projections from seq 0 into the schema `side`, beside the live one, up to the head; returns the
 * projector that can bring them to the head again.
 *
 * Nobody reads the side schema before the swap, and a crash starts the rebuild over from an empty one, so it
 * is loaded in bulk: in big batches, several transactions at once, without its secondary indexes, with figures
 * derived from many rows (counts) left to one pass over the loaded rows, and with commits that do not wait for
 * the disk. Then the figures are derived and the indexes built, and whatever was appended meanwhile is applied
 * batch by batch as live.
 */
async function buildBeside(options: RebuildOptions, side: string): Promise<Projector> {
  const { db } = options.database;
  await sql.raw(`drop schema if exists ${quoteIdent(side)} cascade`).execute(db);
  await migrate(db, side, readModelMigrations(options.projections));
  await ensureCheckpoints(db, side, options.projections.map((p) => p.name));
  const deferred = await dropSecondaryIndexes(db, side);
  options.onPhase?.('load');
  await loadInBulk({ ...options, schema: side, batchSize: options.batchSize ?? REBUILD_BATCH });
  options.onPhase?.('index');
  const server = options.database.kind === 'pg';
  // Deriving figures and building indexes in one pool of connections: a table's index build and the figures'
  // updates of it take locks that order them, so either order gives the same table. The figures start first,
  // so an index is built over the updated rows rather than kept up through the updates.
  const settle = () =>
    db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      for (const projection of options.projections) await projection.settle?.(trx, side);
    });
  const build = (definition: string) => () =>
    db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      // A trigram index built within memory is built in one pass; PGlite's memory is the process's own.
      if (server) await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
      await sql.raw(definition).execute(trx);
    });
  await inParallel([settle, ...deferred.map(build)], server ? PARALLEL : 1, (task) => task());
  options.onPhase?.('tail');
  const tail = await new Projector({ ...options, bus: undefined, schema: side }).init();
  await tail.catchUp(options.onProgress);
  return tail;
}

/**
 * Runs `swap` in a transaction that holds the live checkpoints of the rebuilt projections, so that the live
 * projector commits none of them across it, once each rebuilt projection is at least where its live one is: no
 * position moves back, and a read that waited for one still finds it after the swap. Until then, the tail
 * catches up again.
 */
async function swapWhenCaughtUp(
  options: RebuildOptions,
  side: string,
  tail: Projector,
  swap: (trx: Kysely<any>, liveExists: boolean) => Promise<void>,
): Promise<void> {
  const names = options.projections.map((p) => p.name);
  options.onPhase?.('swap');
  for (;;) {
    const swapped = await options.database.db.transaction().execute(async (trx) => {
      const exists = await sql<{ n: number }>`select count(*)::int as n from pg_namespace where nspname = ${options.schema}`.execute(trx);
      const liveExists = Number(exists.rows[0]?.n) > 0;
      const live = liveExists ? await lockCheckpoints(trx, options.schema, names) : new Map<string, number>();
      const rebuilt = await readCheckpoints(trx, side);
      if (names.some((name) => (rebuilt.get(name) ?? -1) < (live.get(name) ?? -1))) return false;
      await swap(trx, liveExists);
      return true;
    });
    if (swapped) return;
    await tail.catchUp(options.onProgress);
  }
}

/**
 * Rebuilds every read model from seq 0 into a schema beside the live one (see buildBeside), then swaps the two
 * in one transaction. The live schema serves reads until the swap; a running projector carries on from the
 * rebuilt checkpoints.
 */
export async function rebuildReadModels(options: RebuildOptions): Promise<number> {
  const live = quoteIdent(options.schema);
  const side = `${options.schema}_rebuild`;
  const old = quoteIdent(`${options.schema}_old`);
  const tail = await buildBeside(options, side);
  await swapWhenCaughtUp(options, side, tail, async (trx, liveExists) => {
    if (liveExists) {
      await sql.raw(`drop schema if exists ${old} cascade`).execute(trx);
      await sql.raw(`alter schema ${live} rename to ${old}`).execute(trx);
    }
    await sql.raw(`alter schema ${quoteIdent(side)} rename to ${live}`).execute(trx);
    await sql.raw(`drop schema if exists ${old} cascade`).execute(trx);
  });
  // Anything appended during the swap is applied by the live projector, or here if none runs.
  const after = await new Projector({ ...options }).init();
  return after.catchUp(options.onProgress);
}

/**
 * Rebuilds one read model from seq 0 beside the live schema (see buildBeside), then moves its tables into the
 * live schema in place of the old ones, in one transaction, with its checkpoint. The other read models serve
 * and follow the ledger throughout; this one serves from its old tables until the swap.
 */
export async function rebuildOneReadModel(options: Omit<RebuildOptions, 'projections'> & { projection: Projection }): Promise<number> {
  const { projection, ...rest } = options;
  const one: RebuildOptions = { ...rest, projections: [projection] };
  const live = quoteIdent(options.schema);
  const side = `${options.schema}_rebuild_${projection.name}`;
  // The live schema has this read model's tables and checkpoint, even if no projector ran it yet.
  await new Projector({ ...one, bus: undefined }).init();
  const tail = await buildBeside(one, side);
  await swapWhenCaughtUp(one, side, tail, async (trx) => {
    const tables = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = ${side} and table_name not in ('checkpoints', 'migrations') order by 1`.execute(trx);
    for (const { name } of tables.rows) {
      await sql.raw(`drop table if exists ${live}.${quoteIdent(name)}`).execute(trx);
      await sql.raw(`alter table ${quoteIdent(side)}.${quoteIdent(name)} set schema ${live}`).execute(trx);
    }
    await writeCheckpoint(trx, options.schema, [projection.name], await readCheckpoint(trx, side, [projection.name]));
    await sql.raw(`drop schema ${quoteIdent(side)} cascade`).execute(trx);
  });
  const after = await new Projector({ ...one }).init();
  return after.catchUp(options.onProgress);
}
