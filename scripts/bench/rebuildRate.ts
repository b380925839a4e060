/**
 * The rebuild rate of every read model (`npm run replay`'s rebuildReadModels) against its floor (rebuildFloor.ts:
 * the rebuilt rows COPYed into empty tables, the same indexes built after), and beside a raw read of the same
 * events, `COPY (select data from es.events) TO STDOUT`, all measured in the same run. Run alone
 * (`node --import tsx scripts/bench/rebuildRate.ts`), it loads BENCH_ENTRIES (100,000) entries of a society
 * (scaleWorld.ts) into a fresh PostgreSQL database, projects them live into a schema of their own, rebuilds,
 * prints both rates and their ratio, checks that the rebuilt read models equal the live ones, and drops the
 * database.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { LEDGER_STREAM, PostgresEventStore, type EventStore } from '@svc/ledger';
import { Projector, REBUILD_BATCH, REBUILD_CONNECTIONS, projections as allProjections, rebuildReadModels, type Projection } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir } from '../../test/support/env';
import { runBench, type Cleanup } from './cleanup';
import { fixed } from './report';
import { measureRebuildFloor, type RebuildFloor } from './rebuildFloor';
import { loadWorld } from './scaleWorld';
import { setting } from './settings';
import { median } from './stats';

export interface RebuildRate {
  entries: number;
  rebuildMs: number;
  entriesPerSecond: number;
  /** The raw read of the events. */
  readMs: number;
  readPerSecond: number;
  floor: RebuildFloor;
  /** Entries per second of the floor's time. */
  floorPerSecond: number;
  /** entriesPerSecond / floorPerSecond: 1 is a rebuild that costs what writing its result does. */
  ratio: number;
}

/** COPY ... TO STDOUT on an open connection, every byte read and dropped; resolves to the rows copied. */
function copyOut(client: pg.Client, query: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let rows = 0;
    let failed: unknown;
    // A pg "submittable": node-postgres hands it the protocol messages of the one query it sends.
    client.query({
      submit: (connection: any) => connection.query(query),
      handleCopyData: () => undefined,
      handleCommandComplete: (message: { text: string }) => (rows = Number(message.text.split(' ')[1])),
      handleError: (error: unknown) => (failed = error),
      handleReadyForQuery: () => (failed ? reject(failed) : resolve(rows)),
    } as any);
  });
}

/**
 * Times one rebuild of every read model of `schema` from seq 0 (with its swap), in batches of `batchSize`
 * (as `npm run replay` by default), and the median of `copies` raw COPYs of the event table after one to warm
 * the cache, on the same database in the same run. The event store must be PostgreSQL
 * (the ledger in `es.events` of `database`).
 */
export async function measureRebuild(options: {
  database: SqlDatabase;
  store: EventStore;
  schema?: string;
  projections?: Projection[];
  batchSize?: number;
  copies?: number;
  rebuild?: typeof rebuildReadModels;
}): Promise<RebuildRate> {
  const { database, store } = options;
  if (!database.url) throw new Error('measureRebuild needs a PostgreSQL server (a database URL)');
  const rebuild = options.rebuild ?? rebuildReadModels;
  const entries = (await store.headRevision(LEDGER_STREAM)) + 1;
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const copies: number[] = [];
  try {
    const copy = async () => {
      const t0 = performance.now();
      const rows = await copyOut(client, 'COPY (select data from es.events) TO STDOUT');
      if (rows !== entries) throw new Error(`COPY read ${rows} rows, the ledger holds ${entries}`);
      return performance.now() - t0;
    };
    // The first read warms the cache for both sides.
    await copy();
    for (let i = 0; i < (options.copies ?? 3); i++) copies.push(await copy());
  } finally {
    await client.end();
  }
  const t0 = performance.now();
  const schema = options.schema ?? 'rm';
  const at = await rebuild({ database, store, projections: options.projections ?? allProjections, schema, batchSize: options.batchSize ?? REBUILD_BATCH });
  const rebuildMs = performance.now() - t0;
  if (at !== entries - 1) throw new Error(`rebuilt to seq ${at}, the ledger head is ${entries - 1}`);
  const floor = await measureRebuildFloor(database.url, schema, REBUILD_CONNECTIONS);
  const readMs = median(copies);
  const entriesPerSecond = entries / (rebuildMs / 1000);
  const floorPerSecond = entries / (floor.floorMs / 1000);
  return { entries, rebuildMs, entriesPerSecond, readMs, readPerSecond: entries / (readMs / 1000), floor, floorPerSecond, ratio: entriesPerSecond / floorPerSecond };
}

/** Columns stamped with the clock, not the ledger. */
const CLOCK_COLUMNS = new Set(['updated_at', 'applied_at']);

/** One digest per table of a schema: equal digests are equal read models. */
async function digest(database: SqlDatabase, schema: string): Promise<Record<string, string>> {
  const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = ${schema} order by 1`.execute(database.db);
  const out: Record<string, string> = {};
  for (const { table_name: table } of tables.rows) {
    const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns where table_schema = ${schema} and table_name = ${table} order by ordinal_position`.execute(database.db);
    const kept = columns.rows.map((c) => c.column_name).filter((c) => !CLOCK_COLUMNS.has(c));
    const row = `row(${kept.map((c) => `"${c}"`).join(', ')})::text`;
    const result = await sql.raw<{ n: number; md5: string }>(`select count(*)::int as n, md5(coalesce(string_agg(${row}, E'\\n' order by ${row}), '')) as md5 from "${schema}"."${table}"`).execute(database.db);
    out[table] = `${result.rows[0]!.n} rows, ${result.rows[0]!.md5}`;
  }
  return out;
}

async function main(cleanup: Cleanup): Promise<void> {
  const entries = Math.floor(setting('BENCH_ENTRIES', 100_000, 1000));
  const db = await freshDatabase('bench_rebuild');
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const database = await openDatabase({ url: db.url, dataDir: tempDir('bench-rebuild'), applicationName: 'bench-rebuild' });
  cleanup.add('close the database', () => database.close());
  const store = await new PostgresEventStore(database).init();
  cleanup.add('close the event store', () => store.close());

  let t0 = performance.now();
  const world = await loadWorld(database.db, entries);
  console.error(`loaded ${world.entries} entries (${world.citizens} citizens, ${world.posts} posts, ${world.replies} replies, ${world.votes} votes, ${world.flags} flags; ${fixed(world.bytes / 1e6, 0)} MB) in ${fixed((performance.now() - t0) / 1000, 1)} s`);

  t0 = performance.now();
  await new Projector({ database, store, projections: allProjections, schema: 'rm_live' }).init().then((p) => p.catchUp());
  const liveMs = performance.now() - t0;
  console.error(`live projector (batches of 500) caught up in ${fixed(liveMs / 1000, 1)} s: ${fixed(entries / (liveMs / 1000), 0)} entries/s`);

  const rate = await measureRebuild({ database, store, schema: 'rm', batchSize: setting('BENCH_BATCH', 0, 0) || undefined });
  console.log(JSON.stringify(rate));
  console.error(
    `rebuild: ${fixed(rate.rebuildMs / 1000, 2)} s, ${fixed(rate.entriesPerSecond, 0)} entries/s; floor: ${fixed(rate.floor.floorMs / 1000, 2)} s (COPY ${fixed(rate.floor.copyMs / 1000, 2)} s, indexes ${fixed(rate.floor.indexMs / 1000, 2)} s), ${fixed(rate.floorPerSecond, 0)} entries/s; ratio ${fixed(rate.ratio, 3)}; raw read of the events ${fixed(rate.readPerSecond, 0)} entries/s`,
  );
  const [live, rebuilt] = [await digest(database, 'rm_live'), await digest(database, 'rm')];
  const differing = Object.keys({ ...live, ...rebuilt }).filter((table) => live[table] !== rebuilt[table]);
  if (differing.length > 0) throw new Error(`the rebuilt read models differ from the live ones in ${differing.map((t) => `${t} (${rebuilt[t]} vs ${live[t]})`).join(', ')}`);
  console.error(`rebuilt read models equal the live ones (${Object.keys(live).length} tables)`);
}

if (require.main === module) runBench('rebuild rate', 30 * 60_000, main);
