import { ledgerModel, type DecisionSeen, type LedgerCommand, type LedgerState } from '@svc/domain';
import {
  LEDGER_STREAM,
  LedgerWriter,
  PostgresEventStore,
  SnapshotStore,
  inMemoryState,
  tieredState,
  type DecisionStateKind,
  type EventStore,
} from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { until } from '../support/until';
import { countingStore as counting } from '../support/eventStore';
import { postCommand as post, registerCitizenCommand as register, voteCommand as vote } from '../support/ledgerModel';

// The writer decides, appends and retries the same way whichever DecisionState it is handed: one suite, run
// over the whole state in memory with snapshots (as with EventStoreDB) and over the tiered state with memory
// kept to three keys a map (as with PostgreSQL), so that nearly every decision there reads cold keys.

type Writer = LedgerWriter<LedgerState, LedgerCommand, DecisionSeen>;

interface Opened {
  store: PostgresEventStore;
  snapshots: SnapshotStore;
}

const kinds: Array<[string, (opened: Opened) => DecisionStateKind<LedgerState>]> = [
  ['whole in memory, snapshotted', ({ snapshots }) => inMemoryState({ snapshots, snapshotEvery: 5 })],
  ['tiered, three hot keys a map', ({ store }) => tieredState({ tier: store.stateTier(LEDGER_STREAM), hotKeys: 3, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) })],
];

describe.each(kinds)('the ledger writer over a decision state kept %s', (_, kindOf) => {
  let db: FreshDatabase;
  let databases: SqlDatabase[] = [];

  async function open(): Promise<Opened> {
    const database = await openDatabase({ url: db.url, dataDir: tempDir('decision-state') });
    databases.push(database);
    return { store: await new PostgresEventStore(database).init(), snapshots: await new SnapshotStore(database).init() };
  }

  async function started(opened: Opened, store: EventStore = opened.store): Promise<Writer> {
    const writer = new LedgerWriter(store, ledgerModel, { state: kindOf(opened) });
    await writer.start();
    return writer;
  }

  beforeEach(async () => {
    db = await freshDatabase('decision_state');
  });
  afterEach(async () => {
    await Promise.all(databases.map((d) => d.close()));
    databases = [];
    await db.drop();
  });

  it('groups concurrent commands into shared appends, refusing one without touching the others', async () => {
    const opened = await open();
    const counted = counting(opened.store);
    const writer = await started(opened, counted);
    const outcomes = await Promise.all([...Array.from({ length: 100 }, (_, i) => register(i)), register('x', 'H7')].map((c) => writer.execute(c)));
    expect(outcomes.slice(0, 100).every((o) => o.ok)).toBe(true);
    expect(outcomes[100]).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(outcomes.flatMap((o) => (o.ok ? o.entries.map((e) => e.seq) : [])).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(counted.appends).toBeLessThan(100 / 4);
    expect(writer.head.seq).toBe(99);
  }, 60_000);

  it('stays correct with two writers racing: catch up, decide again, one winner per handle', async () => {
    const [first, second] = await Promise.all([open().then((o) => started(o)), open().then((o) => started(o))]);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => [first.execute(register(`a${i}`, `handle${i}`)), second.execute(register(`b${i}`, `HANDLE${i}`))]).flat());
    expect(results.filter((r) => r.ok)).toHaveLength(30);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.rejection.code === 'handle_taken')).toBe(true);
    expect(await first.execute(register('c', 'Handle7'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await second.execute(register('d', 'handle8'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  }, 60_000);

  it('starts again from what it stored, reading only the tail of the ledger', async () => {
    const opened = await open();
    const writer = await started(opened);
    for (let i = 0; i < 12; i++) await writer.execute(register(i));
    await writer.saveSnapshot();
    await writer.execute(register(12));
    await writer.execute(register(13));
    const counted = counting(opened.store);
    const restarted = await started(opened, counted);
    expect(Math.min(...counted.reads)).toBeGreaterThan(0);
    expect(restarted.head).toEqual(writer.head);
    expect(await restarted.execute(register('x', 'h3'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await restarted.execute(register(14))).toMatchObject({ ok: true, entries: [{ seq: 14 }] });
  }, 60_000);

  it('decides at the true head a not_found that rests on a stale view, and says what the decision saw', async () => {
    const opened = await open();
    const [one, two] = await Promise.all([started(opened), started(await open())]);
    for (const command of [register('a'), register('b'), post('a', 'p')]) expect((await one.execute(command)).ok).toBe(true);
    // `two` has seen none of it: its own view would say the post does not exist.
    expect(await two.executeAtHead(vote('b', 'p', 1))).toMatchObject({ ok: true, entries: [{ seq: 3, data: { value: 1 } }], seen: { actorHandle: 'hb' } });
    // What does not exist at the true head either stays refused.
    expect(await two.executeAtHead(post('b', 'r', 'missing'))).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
  }, 60_000);

  it('decides again at the true head when its own view has nothing to append', async () => {
    const opened = await open();
    const [one, two] = await Promise.all([started(opened), started(await open())]);
    for (const command of [register('a'), register('b'), post('a', 'p'), vote('b', 'p', 1)]) expect((await one.execute(command)).ok).toBe(true);
    expect(await two.executeAtHead(vote('b', 'p', 1))).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hb' } });
    // Changed through the other writer: repeating the first vote is a change again, not a no-op.
    expect((await one.execute(vote('b', 'p', -1))).ok).toBe(true);
    expect(await two.executeAtHead(vote('b', 'p', 1))).toMatchObject({ ok: true, entries: [{ data: { previous: -1, value: 1 } }], seen: { actorHandle: 'hb' } });
  }, 60_000);

  it('gives a refusal or a no-op at once, with no catch-up, when the stored head has not moved since', async () => {
    const opened = await open();
    const counted = counting(opened.store);
    const writer = await started(opened, counted);
    for (const command of [register('a'), register('b'), post('a', 'p'), vote('b', 'p', 1)]) expect((await writer.execute(command)).ok).toBe(true);
    const reads = counted.reads.length;
    expect(await writer.executeAtHead(vote('b', 'p', 1))).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hb' } });
    expect(await writer.executeAtHead(post('b', 'r', 'missing'))).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
    expect(counted.reads).toHaveLength(reads);
  }, 60_000);

  it('takes any other refusal as final, with no read of the ledger', async () => {
    const opened = await open();
    const counted = counting(opened.store);
    const writer = await started(opened, counted);
    expect((await writer.execute(register(1))).ok).toBe(true);
    const reads = counted.reads.length;
    expect(await writer.executeAtHead(register('x', 'H1'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(counted.reads).toHaveLength(reads);
  }, 60_000);

  it('names the actor from the state the command was decided against, also one memory had let go of', async () => {
    const opened = await open();
    const writer = await started(opened);
    expect(await writer.executeAtHead(register(0, 'First'))).toMatchObject({ ok: true, seen: { actorHandle: 'First' } });
    for (let i = 1; i < 10; i++) await writer.execute(register(i));
    expect(await writer.executeAtHead(post(0, 'p0'))).toMatchObject({ ok: true, entries: [{ type: 'PostCreated' }], seen: { actorHandle: 'First' } });
    // Outcomes of plain `execute` stay as they were: entries only.
    expect(await writer.execute(post(1, 'p1'))).toEqual({ ok: true, entries: [expect.objectContaining({ type: 'PostCreated' })] });
  }, 60_000);
});

describe('the whole decision state in memory', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;

  beforeAll(async () => {
    db = await freshDatabase('in_memory_state');
    database = await openDatabase({ url: db.url, dataDir: tempDir('in-memory-state') });
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  it('is snapshotted in the background every snapshotEvery entries, at a committed head', async () => {
    const store = await new PostgresEventStore(database).init();
    const snapshots = await new SnapshotStore(database).init();
    const writer = new LedgerWriter(store, ledgerModel, { state: inMemoryState({ snapshots, snapshotEvery: 5 }) });
    await writer.start();
    for (let i = 0; i < 4; i++) await writer.execute(register(i));
    expect(await snapshots.load(LEDGER_STREAM)).toBeUndefined();
    await writer.execute(register(4));
    const snapshot = await until('the snapshot at seq 4', 10_000, () => snapshots.load(LEDGER_STREAM));
    expect(snapshot).toMatchObject({ seq: 4, hash: writer.head.hash, version: ledgerModel.snapshotVersion });
    const restored = ledgerModel.restore(snapshot.state);
    expect(restored.citizens.byHandle.get('h4')).toBe('agent_4');
  }, 60_000);
});
