import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { Projector, projections, readCheckpoint, rebuildReadModels } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { killHard, spawnEntry } from '../support/spawn';
import { executeAtOnce, registerCitizenCommand } from '../support/ledgerModel';

const CITIZENS = 30;
const POSTS_EACH = 12;

/** Columns a rebuild stamps with the clock, not the ledger. */
const CLOCK_COLUMNS = new Set(['updated_at', 'applied_at']);

/** Every row of every table of a schema and every index on them, in a stable order: equal dumps are equal read models. */
async function dump(database: SqlDatabase, schema: string): Promise<Record<string, string[]>> {
  const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = ${schema} order by 1`.execute(database.db);
  const out: Record<string, string[]> = {};
  for (const { table_name: table } of tables.rows) {
    const rows = await sql.raw<Record<string, unknown>>(`select * from "${schema}"."${table}"`).execute(database.db);
    out[table] = rows.rows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !CLOCK_COLUMNS.has(column))))).sort();
  }
  const indexes = await sql<{ indexdef: string }>`select indexdef from pg_indexes where schemaname = ${schema} order by indexname`.execute(database.db);
  out['(indexes)'] = indexes.rows.map((r) => r.indexdef.replaceAll(`${schema}.`, '<schema>.'));
  return out;
}

/** Text that COPY's format must escape or that UTF-8 must repair: backslashes, tabs, line ends, its null marker, a lone surrogate. */
const AWKWARD = 'a\\b\tc\nd\re \\N "q" é 🚀 \uD800 end\\';

/** Citizens, tagged posts, replies by others and by their authors, votes changed and changed back, flags; some text awkward. */
async function writeSociety(writer: LedgerWriter<LedgerState, LedgerCommand>): Promise<void> {
  const run = (commands: LedgerCommand[]) => executeAtOnce(writer, commands);
  const agent = (n: number) => `agent_${n}`;
  await run(Array.from({ length: CITIZENS }, (_, n) => registerCitizenCommand(n, `b${n}`, { bio: n === 1 ? AWKWARD : `bio ${n}` })));
  const posts: LedgerCommand[] = [];
  for (let n = 0; n < CITIZENS; n++) {
    for (let i = 0; i < POSTS_EACH; i++) {
      const parent = i % 4 === 3 ? `post_${i % 8 === 7 ? n : (n + 1) % CITIZENS}_${i - 1}` : null;
      posts.push({ type: 'CreatePost', agentId: agent(n), data: { post_id: `post_${n}_${i}`, body: i === 2 ? `${AWKWARD} ${n}` : `thesis ${n} ${i} on the curve`, mint: i % 3 ? null : 'MintB', parent_id: parent, tags: [`T${i % 5}`, 'sol'] } });
    }
  }
  await run(posts.filter((p) => (p.data as { parent_id: string | null }).parent_id === null));
  await run(posts.filter((p) => (p.data as { parent_id: string | null }).parent_id !== null));
  for (const value of [1, -1, 1] as const) {
    const vote = (i: number): LedgerCommand => ({ type: 'CastVote', agentId: agent(i % CITIZENS), data: { post_id: `post_${(i * 7 + 3) % CITIZENS}_${i % 3}`, value: i % 5 ? value : value === 1 ? -1 : 1 } });
    await run(Array.from({ length: CITIZENS * 6 }, (_, i) => vote(i)));
  }
  await run(Array.from({ length: 20 }, (_, i) => ({ type: 'FlagPost', agentId: agent(i), data: { post_id: `post_${(i + 2) % CITIZENS}_0`, reason: i === 3 ? AWKWARD : `flag ${i}` } })));
}

describe('a rebuild loading in bulk', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let head: number;

  beforeAll(async () => {
    db = await freshDatabase('rebuild_bulk');
    database = await openDatabase({ url: db.url, dataDir: tempDir('rebuild-bulk') });
    store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 500 });
    await writer.start();
    await writeSociety(writer);
    head = writer.head.seq;
    await new Projector({ database, store, projections, schema: 'rm' }).init().then((p) => p.catchUp());
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('leaves the live read models untouched when killed with SIGKILL while counting and building its indexes, and the next rebuild whole', async () => {
    const before = await dump(database, 'rm');
    const child = spawnEntry('test/support/rebuildChild.ts', [db.url, 'rm', '100', tempDir('rebuild-bulk-child')], { stdio: ['ignore', 'pipe', 'ignore'] });
    const phases: string[] = [];
    for await (const line of createInterface({ input: child.stdout! })) {
      phases.push(line);
      if (line === 'index') break;
    }
    await killHard(child);
    expect(phases).toEqual(['load', 'index']);
    // The load had finished and the swap had not happened: the kill landed among the index builds.
    expect(await readCheckpoint(database.db, 'rm_rebuild')).toBe(head);
    expect(await dump(database, 'rm')).toEqual(before);

    // A rebuild starts over from an empty schema, whatever the last one left behind.
    expect(await rebuildReadModels({ database, store, projections, schema: 'rm', batchSize: 100 })).toBe(head);
    await new Projector({ database, store, projections, schema: 'rm_clean' }).init().then((p) => p.catchUp());
    const rebuilt = await dump(database, 'rm');
    expect(rebuilt).toEqual(await dump(database, 'rm_clean'));
    expect(rebuilt).toEqual(before);
    const schemas = await sql<{ nspname: string }>`select nspname from pg_namespace where nspname like 'rm%' order by 1`.execute(database.db);
    expect(schemas.rows.map((r) => r.nspname)).toEqual(['rm', 'rm_clean']);
  }, 120_000);

  it('equals the read models applied batch by batch, whatever its batch size', async () => {
    const live = await dump(database, 'rm_clean');
    for (const batchSize of [1, 37, 5000]) {
      await rebuildReadModels({ database, store, projections, schema: 'rm', batchSize });
      expect([batchSize, await dump(database, 'rm')]).toEqual([batchSize, live]);
    }
  }, 180_000);

  it('rebuilds the same read models on the embedded database (PGlite)', async () => {
    const embedded = await openDatabase({ dataDir: tempDir('rebuild-bulk-pglite') });
    const local = await new PostgresEventStore(embedded).init();
    try {
      const writer = new LedgerWriter<LedgerState, LedgerCommand>(local, ledgerModel, { maxBatch: 500 });
      await writer.start();
      await writeSociety(writer);
      await new Projector({ database: embedded, store: local, projections, schema: 'rm' }).init().then((p) => p.catchUp());
      const before = await dump(embedded, 'rm');
      expect(await rebuildReadModels({ database: embedded, store: local, projections, schema: 'rm', batchSize: 64 })).toBe(writer.head.seq);
      expect(await dump(embedded, 'rm')).toEqual(before);
    } finally {
      await local.close();
      await embedded.close();
    }
  }, 180_000);
});
