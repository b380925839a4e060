import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore, SnapshotStore, inMemoryState, sealAndEncode, tieredState, type EventStore, type StateTier, type TieredStateOptions } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { postCommand as post, registerCitizenCommand as register, voteCommand as vote } from '../support/ledgerModel';

// With a PostgreSQL event store the writer keeps its decision state in a table written by every append,
// and in memory only the keys it used lately. These tests keep memory tiny (a few keys per map), so that
// nearly every decision reads cold keys, and check the decisions and the stored state against a writer
// that holds the whole state in memory, built from the same ledger.

describe('decision state kept in a table, with memory bounded', () => {
  let db: FreshDatabase;
  let databases: SqlDatabase[] = [];

  async function open(): Promise<{ database: SqlDatabase; store: PostgresEventStore }> {
    const database = await openDatabase({ url: db.url, dataDir: tempDir('tiered') });
    databases.push(database);
    return { database, store: await new PostgresEventStore(database).init() };
  }

  function tierOf(store: PostgresEventStore, hotKeys = 3): TieredStateOptions {
    return { tier: store.stateTier(LEDGER_STREAM), hotKeys, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) };
  }

  async function tiered(store: PostgresEventStore, hotKeys = 3): Promise<LedgerWriter<LedgerState, LedgerCommand>> {
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: tieredState(tierOf(store, hotKeys)) });
    await writer.start();
    return writer;
  }

  /** Every key of every map, as a writer holding the whole state in memory builds it from the ledger. */
  async function wholeState(store: EventStore): Promise<Record<string, unknown>> {
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const state = await writer.read((s) => s);
    const out: Record<string, unknown> = {};
    for (const map of ledgerModel.journal(state).allMaps()) for (const [key, value] of map.entries()) out[`${map.name}|${String(key)}`] = value;
    return out;
  }

  async function storedState(database: SqlDatabase): Promise<Record<string, unknown>> {
    const { rows } = await sql<{ map: string; key: string; value: string }>`select map, key, value from es.decision_state`.execute(database.db);
    return Object.fromEntries(rows.map((r) => [`${r.map}|${r.key}`, JSON.parse(r.value)]));
  }

  async function storedHead(database: SqlDatabase): Promise<number> {
    const { rows } = await sql<{ seq: string }>`select seq from es.decision_state_head where stream = ${LEDGER_STREAM}`.execute(database.db);
    return Number(rows[0]!.seq);
  }

  beforeEach(async () => {
    db = await freshDatabase('tiered');
  });
  afterEach(async () => {
    await Promise.all(databases.map((d) => d.close()));
    databases = [];
    await db.drop();
  });

  it('decides from keys it no longer holds in memory exactly as from the whole state, and stores every change with its append', async () => {
    const { database, store } = await open();
    const writer = await tiered(store);
    for (let i = 0; i < 30; i++) expect((await writer.execute(register(i))).ok).toBe(true);
    // Long evicted from memory: a handle in any case, a wallet, and an agent id are still taken.
    expect(await writer.execute(register('x', 'H2'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await writer.execute({ ...register('y'), data: { ...register('y').data, wallet: 'W5' } } as LedgerCommand)).toMatchObject({ ok: false });
    for (let i = 0; i < 10; i++) expect((await writer.execute(post(i, `p${i}`))).ok).toBe(true);
    expect((await writer.execute(post(11, 'r1', 'p0'))).ok).toBe(true);
    expect(await writer.execute(post(12, 'r2', 'nope'))).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
    // Votes, in one batch: cold posts, cold authors, a cold previous vote, a self vote.
    const votes = await Promise.all([vote(20, 'p1', 1), vote(21, 'p1', -1), vote(20, 'p2', 1), vote(1, 'p1', 1), vote(22, 'p9', 1)].map((c) => writer.execute(c)));
    expect(votes.map((v) => (v.ok ? 'ok' : v.rejection.code))).toEqual(['ok', 'ok', 'ok', 'self_vote', 'ok']);
    for (let i = 0; i < 10; i++) await writer.execute(register(100 + i));
    // The same vote again writes nothing; a changed one is a new entry that names the previous value.
    expect(await writer.execute(vote(20, 'p1', 1))).toEqual({ ok: true, entries: [] });
    expect(await writer.execute(vote(20, 'p1', -1))).toMatchObject({ ok: true, entries: [{ data: { previous: 1, value: -1 } }] });
    // The daily cap counts across eviction: 50 posts a day, the 51st refused.
    for (let i = 0; i < 49; i++) {
      expect((await writer.execute(post(3, `cap${i}`))).ok).toBe(true);
      await writer.execute(register(200 + i));
    }
    expect(await writer.execute(post(3, 'cap-over'))).toMatchObject({ ok: false, rejection: { code: 'daily_cap' } });

    const state = await writer.read((s) => s);
    for (const map of ledgerModel.journal(state).allMaps()) expect(map.size).toBeLessThanOrEqual(3);
    expect(await storedState(database)).toEqual(await wholeState(store));
    expect(await storedHead(database)).toBe(writer.head.seq);
  }, 60_000);

  it('keeps memory bounded by reads alone, with no write between them', async () => {
    const { store } = await open();
    const writer = await tiered(store);
    for (let i = 0; i < 20; i++) await writer.execute(register(i));
    const reader = await tiered(store);
    for (let i = 0; i < 20; i++) expect(await reader.read((s) => s.citizens.byHandle.get(`h${i}`))).toBe(`agent_${i}`);
    const state = await reader.read((s) => s);
    // At most the cap, plus what the last read loaded.
    for (const map of ledgerModel.journal(state).allMaps()) expect(map.size).toBeLessThanOrEqual(4);
  }, 60_000);

  it('stays correct with two tiered writers racing: one winner per handle, and one stored state', async () => {
    const one = await open();
    const two = await open();
    const [first, second] = await Promise.all([tiered(one.store), tiered(two.store)]);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => [first.execute(register(`a${i}`, `handle${i}`)), second.execute(register(`b${i}`, `HANDLE${i}`))]).flat(),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(40);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.rejection.code === 'handle_taken')).toBe(true);
    // Each writer sees what the other stored, although it never held it in memory.
    expect(await first.execute(register('c', 'Handle7'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await second.execute(register('d', 'handle8'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await storedState(one.database)).toEqual(await wholeState(one.store));
  }, 60_000);

  it('starts from the stored head without reading the ledger before it', async () => {
    const { store } = await open();
    const writer = await tiered(store);
    for (let i = 0; i < 25; i++) await writer.execute(register(i));
    const reads: number[] = [];
    const counted = Object.create(store) as PostgresEventStore;
    counted.readForward = async (stream, from, max) => {
      reads.push(from);
      return store.readForward(stream, from, max);
    };
    const restarted = new LedgerWriter<LedgerState, LedgerCommand>(counted, ledgerModel, { state: tieredState(tierOf(store)) });
    await restarted.start();
    // One read checks the stored head (seq 24) is in the store; one finds no tail.
    expect(reads).toEqual([24, 25]);
    expect(restarted.head.seq).toBe(24);
    expect(await restarted.execute(register('x', 'h3'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await restarted.execute(register(25))).toMatchObject({ ok: true, entries: [{ seq: 25 }] });
  }, 60_000);

  it('stores the whole state on a ledger kept before it was tiered, which has snapshots', async () => {
    const { database, store } = await open();
    const snapshots = await new SnapshotStore(database).init();
    const before = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: inMemoryState({ snapshots, snapshotEvery: 5 }) });
    await before.start();
    for (let i = 0; i < 12; i++) await before.execute(register(i));
    await before.saveSnapshot();
    await before.execute(post(1, 'p1'));
    await before.execute(vote(2, 'p1', 1));
    const writer = await tiered(store);
    expect(writer.head.seq).toBe(13);
    expect(await storedState(database)).toEqual(await wholeState(store));
    expect(await writer.execute(vote(2, 'p1', 1))).toEqual({ ok: true, entries: [] });
    expect(await writer.execute(register('x', 'H11'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
  }, 60_000);

  it('builds the state of a ledger kept before it was tiered page by page, holding a few pages of keys at most', async () => {
    const { database, store } = await open();
    const before = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await before.start();
    for (let i = 0; i < 40; i++) await before.execute(register(i));
    for (let i = 0; i < 12; i++) await before.execute(post(i, `p${i}`));
    for (let i = 0; i < 30; i++) await before.execute(vote((i % 10) + 20, `p${i % 12}`, i % 3 ? 1 : -1));
    const real = store.stateTier(LEDGER_STREAM);
    const sampled: StateTier = Object.create(real);
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: tieredState({ ...tierOf(store, 3), tier: sampled, catchUpPage: 7 }) });
    const maps = [...ledgerModel.journal(await writer.read((s) => s)).allMaps()];
    let pages = 0;
    let mostHeld = 0;
    // Sampled as each page's write is issued: the hot keys, and those of the page being written.
    sampled.advance = (writes, from, head) => {
      pages += 1;
      mostHeld = Math.max(mostHeld, ...maps.map((map) => map.size));
      return real.advance(writes, from, head);
    };
    await writer.start();
    expect(writer.head.seq).toBe(81);
    expect(pages).toBe(Math.ceil(82 / 7));
    // Three hot keys, and those of the page whose write was in flight.
    expect(mostHeld).toBeLessThanOrEqual(3 + 7);
    expect(await storedHead(database)).toBe(81);
    expect(await storedState(database)).toEqual(await wholeState(store));
    expect(await writer.execute(register('x', 'H39'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await writer.execute(vote(20, 'p0', -1))).toEqual({ ok: true, entries: [] });
  }, 60_000);

  it('drops what it built past the stored head when a page fails to store, and builds the rest again from there', async () => {
    const { database, store } = await open();
    const before = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await before.start();
    for (let i = 0; i < 10; i++) await before.execute(register(i));
    // Posts count toward their author's daily cap: evolving a page twice would count them twice.
    for (let i = 0; i < 30; i++) await before.execute(post(i % 3, `p${i}`));
    const real = store.stateTier(LEDGER_STREAM);
    const failing: StateTier = Object.create(real);
    let pages = 0;
    failing.advance = async (writes, from, head) => {
      if (++pages === 3) throw new Error('the state write failed');
      return real.advance(writes, from, head);
    };
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: tieredState({ ...tierOf(store, 3), tier: failing, catchUpPage: 7 }) });
    await expect(writer.start()).rejects.toThrow('the state write failed');
    await writer.start();
    expect(writer.head.seq).toBe(39);
    expect(await storedState(database)).toEqual(await wholeState(store));
  }, 60_000);

  it('builds one stored state when two processes start on a ledger kept before it was tiered at once', async () => {
    const one = await open();
    const two = await open();
    const before = new LedgerWriter<LedgerState, LedgerCommand>(one.store, ledgerModel);
    await before.start();
    for (let i = 0; i < 30; i++) await before.execute(register(i));
    for (let i = 0; i < 20; i++) await before.execute(post(i, `p${i}`));
    const start = (store: PostgresEventStore) => {
      const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: tieredState({ ...tierOf(store, 2), catchUpPage: 3 }) });
      return writer.start().then(() => writer);
    };
    const [first, second] = await Promise.all([start(one.store), start(two.store)]);
    expect([first.head.seq, second.head.seq]).toEqual([49, 49]);
    expect(await storedHead(one.database)).toBe(49);
    expect(await storedState(one.database)).toEqual(await wholeState(one.store));
    expect(await first.execute(register('x', 'h29'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await second.execute(post(3, 'p3'))).toMatchObject({ ok: false });
  }, 60_000);

  it('takes in entries stored without a writer, and stores the state they bring', async () => {
    const { database, store } = await open();
    const writer = await tiered(store);
    for (let i = 0; i < 5; i++) await writer.execute(register(i));
    // Bulk-loaded behind the writer's back, chained onto its head.
    let prev = writer.head.hash;
    const rows = Array.from({ length: 20 }, (_, i) => {
      const seq = 5 + i;
      const sealed = sealAndEncode(prev, { seq, type: 'CitizenRegistered', at: Date.now(), actor: `agent_bulk${i}`, data: { agent_id: `agent_bulk${i}`, handle: `bulk${i}`, model: 'm', bio: '', wallet: `WB${i}`, custody: 'service' } });
      prev = sealed.entry.hash;
      return sealed.bytes;
    });
    for (const [i, data] of rows.entries()) {
      await sql`insert into es.events (stream, revision, event_id, type, data) values (${LEDGER_STREAM}, ${5 + i}, gen_random_uuid(), 'CitizenRegistered', ${data})`.execute(database.db);
    }
    const restarted = await tiered(store);
    expect(restarted.head.seq).toBe(24);
    expect(await storedHead(database)).toBe(24);
    expect(await restarted.execute(register('x', 'BULK3'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await storedState(database)).toEqual(await wholeState(store));
  }, 60_000);

  it('commits the state with the append or neither: a failed state write stores no entry', async () => {
    const { database, store } = await open();
    const real = store.stateTier(LEDGER_STREAM);
    let fail = true;
    const failing: StateTier = Object.create(real);
    failing.writeIn = async (trx, writes, head) => {
      await real.writeIn(trx, writes, head);
      if (fail) throw new Error('the state write failed');
    };
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: tieredState({ ...tierOf(store), tier: failing }) });
    await writer.start();
    await expect(writer.execute(register(1))).rejects.toThrow('the state write failed');
    expect(await store.headRevision(LEDGER_STREAM)).toBe(-1);
    expect(await storedState(database)).toEqual({});
    fail = false;
    expect(await writer.execute(register(1))).toMatchObject({ ok: true, entries: [{ seq: 0 }] });
    expect(await storedState(database)).toEqual(await wholeState(store));
  }, 60_000);
});


