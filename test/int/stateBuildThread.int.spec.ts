import { randomBytes } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { sql } from 'kysely';
import pino from 'pino';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore, tieredState } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { buildDecisionStateInWorker, buildRuntime } from '@svc/runtime';
import { freshDatabase, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { registerCitizenCommand } from '../support/ledgerModel';

// A ledger kept before its decision state was tiered has none stored. The runtime builds it in a worker
// thread, whose heap is given back when the thread ends; the serving thread then starts from the stored head.
describe('the decision state built in a worker thread', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await freshDatabase('state_build');
    database = await openDatabase({ url: db.url, dataDir: tempDir('state-build') });
    store = await new PostgresEventStore(database).init();
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('stores, from another thread, the state a writer holding it whole builds, and a writer then starts from it', async () => {
    const whole = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await whole.start();
    const run = async (commands: LedgerCommand[]) => {
      for (const outcome of await Promise.all(commands.map((c) => whole.execute(c)))) expect(outcome.ok).toBe(true);
    };
    await run(Array.from({ length: 30 }, (_, n) => registerCitizenCommand(n)));
    await run(Array.from({ length: 30 }, (_, n) => ({ type: 'CreatePost', agentId: `agent_${n}`, data: { post_id: `p${n}`, body: `post ${n}`, mint: null, parent_id: null, tags: ['t'] } })));
    await run(Array.from({ length: 30 }, (_, n) => ({ type: 'CastVote', agentId: `agent_${(n + 1) % 30}`, data: { post_id: `p${n}`, value: n % 4 ? 1 : -1 } })));
    const state = await whole.read((s) => s);
    const expected: Record<string, unknown> = {};
    for (const map of ledgerModel.journal(state).allMaps()) for (const [key, value] of map.entries()) expected[`${map.name}|${String(key)}`] = value;

    const built = await buildDecisionStateInWorker({ url: db.url, dataDir: tempDir('state-build-thread'), hotKeys: 5 });
    expect(built.seq).toBe(whole.head.seq);
    expect(built.threadId).not.toBe(threadId);
    const head = await sql<{ seq: string }>`select seq from es.decision_state_head where stream = ${LEDGER_STREAM}`.execute(database.db);
    expect(Number(head.rows[0]!.seq)).toBe(whole.head.seq);
    const { rows } = await sql<{ map: string; key: string; value: string }>`select map, key, value from es.decision_state`.execute(database.db);
    expect(Object.fromEntries(rows.map((r) => [`${r.map}|${r.key}`, JSON.parse(r.value)]))).toEqual(expected);

    // A tiered writer starting now reads the stored head and no entry before it.
    const reads: number[] = [];
    const counted = Object.create(store) as PostgresEventStore;
    counted.readForward = async (stream, from, max) => {
      reads.push(from);
      return store.readForward(stream, from, max);
    };
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(counted, ledgerModel, { state: tieredState({ tier: store.stateTier(LEDGER_STREAM), hotKeys: 5, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) }) });
    await writer.start();
    expect(reads).toEqual([whole.head.seq, whole.head.seq + 1]);
    expect(await writer.execute({ type: 'RegisterCitizen', data: { agent_id: 'agent_x', handle: 'H7', model: 'm', bio: '', wallet: 'WX', custody: 'service' } })).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  }, 60_000);
});

describe("the runtime's first start on a ledger with no decision state stored", () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let head: number;

  beforeAll(async () => {
    db = await freshDatabase('state_build_runtime');
    database = await openDatabase({ url: db.url, dataDir: tempDir('state-build-runtime') });
    store = await new PostgresEventStore(database).init();
    // Written by a writer that keeps its state in memory and stores none, as before the state was tiered.
    const whole = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await whole.start();
    for (let n = 0; n < 40; n++) {
      expect(await whole.execute({ type: 'RegisterCitizen', data: { agent_id: `agent_${n}`, handle: `h${n}`, model: 'm', bio: '', wallet: `W${n}`, custody: 'service' } })).toMatchObject({ ok: true });
    }
    head = whole.head.seq;
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  /** Starts the runtime on the ledger with no state stored; returns what it logged. */
  async function firstStart(buildStateInThreadFrom: number): Promise<Array<{ msg: string; seq?: number }>> {
    await sql`delete from es.decision_state_head`.execute(database.db);
    const lines: Array<{ msg: string; seq?: number }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const config = testConfig({ DATABASE_URL: db.url, EVENTSTORE_URL: '', DATA_DIR: tempDir('state-build-runtime-data'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') });
    const runtime = await buildRuntime(config, log, { buildStateInThreadFrom });
    try {
      expect(runtime.writer.head.seq).toBe(head);
      const stored = await sql<{ seq: string }>`select seq from es.decision_state_head where stream = ${LEDGER_STREAM}`.execute(database.db);
      expect(Number(stored.rows[0]?.seq)).toBe(head);
      expect(await runtime.writer.execute({ type: 'RegisterCitizen', data: { agent_id: 'agent_x', handle: 'H39', model: 'm', bio: '', wallet: 'WX', custody: 'service' } })).toMatchObject({
        ok: false,
        rejection: { code: 'handle_taken' },
      });
    } finally {
      await runtime.close();
    }
    return lines;
  }

  it('builds it in a worker thread from the threshold on', async () => {
    const lines = await firstStart(head + 1);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['no decision state stored for this ledger: building it once, in a worker thread', 'decision state built']));
    expect(lines.find((l) => l.msg === 'decision state built')?.seq).toBe(head);
  }, 60_000);

  it('builds it in the serving thread below the threshold', async () => {
    const lines = await firstStart(head + 2);
    expect(lines.map((l) => l.msg)).not.toContain('decision state built');
  }, 60_000);
});
