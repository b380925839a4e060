import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { Projector, projections, readCheckpoint } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { killHard, spawnEntry } from '../support/spawn';
import { until } from '../support/until';
import { executeAtOnce, registerCitizenCommand } from '../support/ledgerModel';

const KILLS = 20;
const CITIZENS = 40;
const POSTS_EACH = 25;
const REBUILD_BATCH = 40;

/** Columns a rebuild stamps with the clock, not the ledger. */
const CLOCK_COLUMNS = new Set(['updated_at', 'refreshed_at', 'projected_at', 'applied_at']);

/** Every row of every table of a schema, in a stable order: equal dumps are equal read models. */
async function dump(database: SqlDatabase, schema: string): Promise<Record<string, string[]>> {
  const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = ${schema} order by 1`.execute(database.db);
  const out: Record<string, string[]> = {};
  for (const { table_name: table } of tables.rows) {
    const rows = await sql.raw<Record<string, unknown>>(`select * from "${schema}"."${table}"`).execute(database.db);
    out[table] = rows.rows
      .map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !CLOCK_COLUMNS.has(column)))))
      .sort();
  }
  return out;
}

describe('npm run replay killed with SIGKILL at 20 random points', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let head: number;

  beforeAll(async () => {
    db = await freshDatabase('rebuild_kill');
    database = await openDatabase({ url: db.url, dataDir: tempDir('rebuild-kill') });
    store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 500 });
    await writer.start();
    const run = (commands: LedgerCommand[]) => executeAtOnce(writer, commands);
    const agent = (n: number) => `agent_${n}`;
    await run(Array.from({ length: CITIZENS }, (_, n) => registerCitizenCommand(n, `k${n}`)));
    const posts: LedgerCommand[] = [];
    for (let n = 0; n < CITIZENS; n++) {
      for (let i = 0; i < POSTS_EACH; i++) {
        const parent = i % 5 === 4 ? `post_${(n + 1) % CITIZENS}_${i - 1}` : null;
        posts.push({ type: 'CreatePost', agentId: agent(n), data: { post_id: `post_${n}_${i}`, body: `signal ${n} ${i} moon curve`, mint: null, parent_id: parent, tags: [`t${i % 7}`] } });
      }
    }
    await run(posts.filter((p) => (p.data as { parent_id: string | null }).parent_id === null));
    await run(posts.filter((p) => (p.data as { parent_id: string | null }).parent_id !== null));
    await run(
      Array.from({ length: CITIZENS * 10 }, (_, i) => ({ type: 'CastVote', agentId: agent(i % CITIZENS), data: { post_id: `post_${(i * 7 + 3) % CITIZENS}_${i % 4}`, value: i % 3 ? 1 : -1 } })),
    );
    head = writer.head.seq;
    // The live read models the rebuild replaces, as the projector left them.
    const live = await new Projector({ database, store, projections, schema: 'rm' }).init();
    await live.catchUp();
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('leaves the live read models whole at every kill, and a finished rebuild equal to a clean one', async () => {
    const before = await dump(database, 'rm');
    expect(before.posts!.length).toBe(CITIZENS * POSTS_EACH);
    const start = (): ChildProcess => spawnEntry('test/support/rebuildChild.ts', [db.url, 'rm', String(REBUILD_BATCH), tempDir('rebuild-kill-child')], { stdio: 'ignore' });
    const rebuilt = () => readCheckpoint(database.db, 'rm_rebuild').catch(() => -1);
    const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));

    const points: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      // The last run's half-built schema would answer for this run until this run drops it.
      await sql.raw('drop schema if exists rm_rebuild cascade').execute(database.db);
      const child = start();
      // Anywhere from the first batch to the swap itself (a target past the head kills around the swap).
      const target = Math.floor(Math.random() * (head + REBUILD_BATCH * 2));
      const ended = exited(child);
      let finished = false;
      void ended.then(() => (finished = true));
      // Polls the rebuild's own checkpoint: the kill lands after a batch committed, wherever that is.
      await until(`the rebuild at ${target}, or its end`, 300_000, async () => (await rebuilt()) >= target || finished, 5);
      await killHard(child);
      await ended;
      points.push(await rebuilt());
      // Whatever the kill interrupted, the live schema is the old read models or the new, never a mix.
      expect([kill, await dump(database, 'rm')]).toEqual([kill, before]);
    }
    // The kills landed all along the rebuild, not only at its start.
    expect(Math.max(...points)).toBeGreaterThan(head / 2);

    const last = start();
    expect(await exited(last)).toBe(0);
    const clean = await new Projector({ database, store, projections, schema: 'rm_clean' }).init();
    await clean.catchUp();
    expect(await readCheckpoint(database.db, 'rm')).toBe(head);
    expect(await dump(database, 'rm')).toEqual(await dump(database, 'rm_clean'));
    expect(await dump(database, 'rm')).toEqual(before);
  }, 300_000);
});
