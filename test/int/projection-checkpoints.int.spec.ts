import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { InProcessBus, PROJECTED_CHANNEL, type Notification } from '@svc/bus';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LedgerWriter, PostgresEventStore } from '@svc/ledger';
import { Projector, agents, projections, readCheckpoint, readCheckpoints, type Projection } from '@svc/projections';
import { execAll, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { ProjectionWatcher } from '../../apps/api/src/projectionWatcher';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const ROOT = path.resolve(__dirname, '../..');
const REAL = projections.map((p) => p.name);
/** Read models added since the release that kept the one checkpoint `main`: an upgrade from it builds them from seq 0. */
const SINCE_MAIN = ['candles', 'anchors'];
/** Columns a rebuild stamps with the clock, not the ledger. */
const CLOCK_COLUMNS = new Set(['updated_at', 'refreshed_at', 'projected_at', 'applied_at']);

/** A read model added once the ledger has grown: a row per entry, applied slowly, so that catching up takes a while. */
const lateProjection: Projection = {
  name: 'late_seen',
  canHandle: '*',
  migrations: [{ name: 'late_seen_001', up: (db, schema) => execAll(db, [`create table ${schema}.late_seen (seq bigint primary key)`]) }],
  async apply(trx, schema, entries) {
    await new Promise((resolve) => setTimeout(resolve, 40));
    await sql`insert into ${sql.raw(schema)}.late_seen (seq) select unnest(${entries.map(({ entry }) => entry.seq)}::bigint[]) on conflict do nothing`.execute(trx);
  },
};

/** Every row of the tables, without clock columns, in a stable order. */
async function rowsOf(database: SqlDatabase, schema: string, tables: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await sql.raw<Record<string, unknown>>(`select * from "${schema}"."${table}"`).execute(database.db);
    out[table] = rows.rows.map((row) => JSON.stringify(Object.fromEntries(Object.entries(row).filter(([column]) => !CLOCK_COLUMNS.has(column))))).sort();
  }
  return out;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a checkpoint per projection', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let writer: LedgerWriter<LedgerState, LedgerCommand>;
  let citizens = 0;
  let posts = 0;

  async function run(commands: LedgerCommand[]): Promise<number> {
    const outcomes = await Promise.all(commands.map((c) => writer.execute(c)));
    const refused = outcomes.find((o) => !o.ok);
    if (refused && !refused.ok) throw new Error(`setup refused: ${refused.rejection.code} ${refused.rejection.message}`);
    return writer.head.seq;
  }
  const register = (n: number): Promise<number> =>
    run(Array.from({ length: n }, () => citizens++).map((i) => ({ type: 'RegisterCitizen', data: { agent_id: `agent_${i}`, handle: `c${i}`, model: 'm', bio: `bio ${i}`, wallet: `W${i}`, custody: 'service' } })));
  /**
   * Posts by the next citizens in turn, and votes on them by the others: karma, scores and tags to rebuild. In turn,
   * so that a test writing while something runs never meets the daily post cap, however slow the machine.
   */
  const society = async (authors: number): Promise<number> => {
    const made = Array.from({ length: authors }, () => {
      const n = posts++;
      return { id: `post_${n}`, author: n % citizens };
    });
    await run(made.map(({ id, author }) => ({ type: 'CreatePost', agentId: `agent_${author}`, data: { post_id: id, body: `signal ${id} moon`, mint: null, parent_id: null, tags: [`t${author % 3}`] } })));
    return run(made.flatMap(({ id, author }) => [1, 2].map((k) => ({ type: 'CastVote', agentId: `agent_${(author + k) % citizens}`, data: { post_id: id, value: k === 1 ? 1 : -1 } }) as LedgerCommand)));
  };

  beforeEach(async () => {
    db = await freshDatabase('checkpoints');
    database = await openDatabase({ url: db.url, dataDir: tempDir('checkpoints') });
    store = await new PostgresEventStore(database).init();
    writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { maxBatch: 500 });
    await writer.start();
    citizens = 0;
    posts = 0;
  });
  afterEach(async () => {
    await store.close();
    await database.close();
    await db.drop();
  });

  it('applies and announces the leading read model of each live batch before the others', async () => {
    const registered = await register(3);
    const bus = new InProcessBus();
    const projector = await new Projector({ database, store, projections, schema: 'rm', bus, leading: ['entries'] }).init();
    await projector.catchUp();
    const heard: Array<{ message: Notification; entriesAt: number }> = [];
    const named = (message: Notification): string[] => (Array.isArray(message.projections) ? (message.projections as string[]) : []);
    const checkpoint = (name: string) => readCheckpoint(database.db, 'rm', [name]);
    const noted: Promise<void>[] = [];
    await bus.subscribe(PROJECTED_CHANNEL, (message) => {
      noted.push((async () => heard.push({ message, entriesAt: await checkpoint('entries') }))().then(() => undefined));
    });
    const controller = new AbortController();
    const following = projector.run(controller.signal);
    try {
      const head = await society(2);
      await until('both announcements of the batch', 10_000, async () => (heard.some((h) => h.message.seq === head && !named(h.message).includes('entries')) ? true : undefined));
      await Promise.all(noted);
      // The bus delivers in turn: the catch-up's announcement of the registrations may come first.
      const live = heard.filter((h) => h.message.seq > registered);
      const first = live.find((h) => named(h.message).includes('entries'))!;
      expect(named(first.message)).toEqual(['entries']);
      expect(Array.isArray(first.message.entries) && first.message.entries.length > 0).toBe(true);
      // Announced once its own transaction committed, ahead of the read models that follow it.
      expect(first.entriesAt).toBeGreaterThanOrEqual(first.message.seq);
      const rest = live.filter((h) => !named(h.message).includes('entries'));
      expect(rest.length).toBeGreaterThan(0);
      expect(rest.every((h) => named(h.message).includes('posts'))).toBe(true);
      expect(live.every((h) => named(h.message).includes('entries') === (named(h.message).length === 1))).toBe(true);
      expect(await checkpoint('posts')).toBe(head);
    } finally {
      controller.abort();
      await following;
    }
  });

  it('applies and announces the leading read model of each live batch while the others still apply an earlier one', async () => {
    const registered = await register(3);
    let reach!: () => void;
    let open!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const opened = new Promise<void>((resolve) => (open = resolve));
    // Holds every live batch until the test opens it; what the catch-up applies passes.
    const held: Projection = {
      name: 'held_seen',
      canHandle: '*',
      migrations: [],
      async apply(_trx, _schema, entries) {
        if (entries.some(({ entry }) => entry.seq > registered)) {
          reach();
          await opened;
        }
      },
    };
    const bus = new InProcessBus();
    const announced: Notification[] = [];
    await bus.subscribe(PROJECTED_CHANNEL, (message) => announced.push(message));
    const projector = await new Projector({ database, store, projections: [...projections, held], schema: 'rm', bus, leading: ['entries'] }).init();
    await projector.catchUp();
    const controller = new AbortController();
    const following = projector.run(controller.signal);
    try {
      const first = await society(1);
      await reached;
      const second = await register(2);
      const leading = await until('the entries announced at the second write', 10_000, async () => announced.find((m) => m.seq === second && (m.projections as string[]).includes('entries')));
      expect(leading.projections).toEqual(['entries']);
      expect(await readCheckpoint(database.db, 'rm', ['entries'])).toBe(second);
      // The others are still inside the first write.
      expect(await readCheckpoint(database.db, 'rm', ['held_seen', 'posts'])).toBeLessThan(first);
      open();
      // Announced after its commit: the checkpoints are there by then.
      await until('the others announced at the second write', 10_000, async () => announced.find((m) => m.seq === second && (m.projections as string[]).includes('held_seen')));
      expect(await readCheckpoint(database.db, 'rm', [...REAL, 'held_seen'])).toBe(second);
    } finally {
      open();
      controller.abort();
      await following;
    }
  });

  it('catches a projection added to a live ledger up from seq 0 on its own, while the others answer at the head', async () => {
    await register(1500);
    await new Projector({ database, store, projections, schema: 'rm' }).init().then((p) => p.catchUp());
    const bus = new InProcessBus();
    const heard: Notification[] = [];
    await bus.subscribe(PROJECTED_CHANNEL, (message) => heard.push(message));
    const watcher = new ProjectionWatcher(bus, database.db, 'rm', [...REAL, lateProjection.name], 25);
    await watcher.start();
    const controller = new AbortController();
    const projector = await new Projector({ database, store, projections: [...projections, lateProjection], schema: 'rm', bus, batchSize: 25 }).init();
    const following = projector.run(controller.signal);
    try {
      // Writes while the new read model is far behind: the others take them at once.
      const head = await register(5);
      expect(await watcher.waitFor(head, 5_000, REAL)).toBe(true);
      expect(await agents.findAgent(database.db, 'rm', `c${citizens - 1}`)).toMatchObject({ handle: `c${citizens - 1}` });
      const late = await readCheckpoint(database.db, 'rm', [lateProjection.name]);
      expect(late).toBeLessThan(head - 500);
      // A read of the new read model would still wait.
      expect(await watcher.waitFor(head, 1, [lateProjection.name])).toBe(false);

      expect(await watcher.waitFor(head, 30_000, [lateProjection.name])).toBe(true);
      const seen = await sql<{ n: number; low: number; high: number }>`select count(*)::int as n, min(seq)::int as low, max(seq)::int as high from rm.late_seen`.execute(database.db);
      expect(seen.rows[0]).toEqual({ n: head + 1, low: 0, high: head });

      // Caught up, it shares the live batches: one transaction and one announcement move all of them.
      const next = await register(3);
      expect(await watcher.waitFor(next, 5_000)).toBe(true);
      const checkpoints = await readCheckpoints(database.db, 'rm');
      expect([...checkpoints.values()]).toEqual(Array(REAL.length + 1).fill(next));
      const last = await until('the announcement of the last batch', 5_000, async () => heard.find((m) => m.seq === next));
      expect([...(last.projections as string[])].sort()).toEqual([...REAL, lateProjection.name].sort());
    } finally {
      controller.abort();
      await following;
      await watcher.stop();
    }
  }, 60_000);

  it.each([{ leading: [] }, { leading: ['entries'] }])('lets a projection that keeps failing fall behind alone, and catches it up once it applies again (leading: $leading)', async ({ leading }) => {
    await register(20);
    let broken = true;
    const fragile: Projection = {
      name: 'fragile',
      canHandle: '*',
      migrations: [],
      async apply(_trx, _schema, entries) {
        if (broken && entries.some(({ entry }) => entry.seq === 25)) throw new Error('cannot apply seq 25');
      },
    };
    const controller = new AbortController();
    const projector = await new Projector({ database, store, projections: [...projections, fragile], schema: 'rm', batchSize: 5, leading }).init();
    const following = projector.run(controller.signal);
    try {
      let head = -1;
      for (let round = 0; round < 4; round++) head = await register(5);
      await until('the others at the head', 10_000, async () => ((await readCheckpoint(database.db, 'rm', REAL)) === head ? true : undefined));
      const stuck = await readCheckpoint(database.db, 'rm', ['fragile']);
      expect(stuck).toBeLessThan(25);
      expect(stuck).toBeGreaterThanOrEqual(19);
      broken = false;
      await until('the healed projection at the head', 10_000, async () => ((await readCheckpoint(database.db, 'rm', ['fragile'])) === head ? true : undefined));
    } finally {
      controller.abort();
      await following;
    }
  }, 30_000);

  it('builds a real read model registered late to what a projection from the start makes', async () => {
    await register(60);
    await society(30);
    const without = projections.filter((p) => p.name !== 'search');
    await new Projector({ database, store, projections: without, schema: 'rm' }).init().then((p) => p.catchUp());
    expect((await readCheckpoints(database.db, 'rm')).has('search')).toBe(false);
    const controller = new AbortController();
    const projector = await new Projector({ database, store, projections, schema: 'rm', batchSize: 10 }).init();
    const following = projector.run(controller.signal);
    try {
      const head = await society(10);
      await until('every read model at the head', 30_000, async () => ((await readCheckpoint(database.db, 'rm', REAL)) === head ? true : undefined));
    } finally {
      controller.abort();
      await following;
    }
    await new Projector({ database, store, projections, schema: 'rm_clean' }).init().then((p) => p.catchUp());
    const tables = ['search_docs', 'agents', 'posts', 'checkpoints'];
    expect(await rowsOf(database, 'rm', tables)).toEqual(await rowsOf(database, 'rm_clean', tables));
  }, 60_000);

  it('starts every projection of a database that had the one checkpoint main from it, replaying nothing', async () => {
    await register(40);
    const head = await society(20);
    await new Projector({ database, store, projections, schema: 'rm' }).init().then((p) => p.catchUp());
    // The schema as the release before this one left it.
    await execAll(database.db, [
      'delete from rm.checkpoints',
      `insert into rm.checkpoints (name, seq) values ('main', ${head})`,
      `delete from rm.migrations where name in ('checkpoints_002', 'agents_002')`,
      'alter table rm.agents drop column karma_seq',
    ]);
    let applied = 0;
    const counted = projections.map((p): Projection =>
      SINCE_MAIN.includes(p.name) ? p : { ...p, apply: (trx, schema, entries, options) => ((applied += entries.length), p.apply(trx, schema, entries, options)) },
    );
    const projector = await new Projector({ database, store, projections: [...counted, lateProjection], schema: 'rm' }).init();
    const fromMain = REAL.filter((name) => !SINCE_MAIN.includes(name));
    expect(Object.fromEntries(projector.checkpoints)).toEqual({
      ...Object.fromEntries(fromMain.map((name) => [name, head])),
      ...Object.fromEntries([...SINCE_MAIN, lateProjection.name].map((name) => [name, -1])),
    });
    await projector.catchUp();
    expect(applied).toBe(0);
    expect(await readCheckpoint(database.db, 'rm', SINCE_MAIN)).toBe(head);
    expect(await readCheckpoint(database.db, 'rm', [lateProjection.name])).toBe(head);
    // Votes after the upgrade move karma from where the older release had counted it.
    await society(10);
    await projector.catchUp();
    await new Projector({ database, store, projections, schema: 'rm_clean' }).init().then((p) => p.catchUp());
    const tables = ['agents', 'posts', 'votes'];
    expect(await rowsOf(database, 'rm', tables)).toEqual(await rowsOf(database, 'rm_clean', tables));
  }, 60_000);

  it('rebuilds one read model through npm run replay -- --only, while a live projector keeps the others at the head', async () => {
    await register(80);
    await society(40);
    const controller = new AbortController();
    const projector = await new Projector({ database, store, projections, schema: 'rm' }).init();
    const following = projector.run(controller.signal);
    try {
      await until('the live read models at the head', 10_000, async () => ((await readCheckpoint(database.db, 'rm')) === writer.head.seq ? true : undefined));
      await execAll(database.db, ["delete from rm.posts where post_id like 'post_1%'", "update rm.agents set bio = 'drifted'"]);
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/replay.ts'), '--only', 'posts'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: db.url, EVENTSTORE_URL: '', REDIS_URL: '', DATA_DIR: tempDir('replay-one') },
      });
      let text = '';
      child.stdout.on('data', (chunk) => (text += chunk));
      child.stderr.on('data', (chunk) => (text += chunk));
      let code: number | null | undefined;
      const exited = new Promise<void>((resolve) => child.on('exit', (exit) => resolve(void (code = exit))));
      // Written while the replay runs: the others take each write at once, and the rebuilt one gets them all.
      let head = writer.head.seq;
      let rounds = 0;
      while (code === undefined) {
        head = await society(2);
        rounds += 1;
        await until('the others at the head', 5_000, async () => ((await readCheckpoint(database.db, 'rm', ['agents', 'entries', 'search'])) === head ? true : undefined));
      }
      await exited;
      expect(code).toBe(0);
      expect(rounds).toBeGreaterThan(1);
      expect(text).toMatch(/read model posts rebuilt to seq \d+/);
      await until('every read model at the head', 10_000, async () => ((await readCheckpoint(database.db, 'rm')) === head ? true : undefined));
    } finally {
      controller.abort();
      await following;
    }
    await new Projector({ database, store, projections, schema: 'rm_clean' }).init().then((p) => p.catchUp());
    const rebuilt = ['posts', 'post_tags', 'tags', 'votes', 'flags', 'checkpoints'];
    expect(await rowsOf(database, 'rm', rebuilt)).toEqual(await rowsOf(database, 'rm_clean', rebuilt));
    // Only that read model was rebuilt.
    const bios = await sql<{ bio: string }>`select distinct bio from rm.agents`.execute(database.db);
    expect(bios.rows).toEqual([{ bio: 'drifted' }]);
    const schemas = await sql<{ nspname: string }>`select nspname from pg_namespace where nspname like 'rm%' order by 1`.execute(database.db);
    expect(schemas.rows.map((r) => r.nspname)).toEqual(['rm', 'rm_clean']);
  }, 120_000);
});
