import { ledgerModel, type DecisionSeen, type LedgerCommand, type LedgerState } from '@svc/domain';
import {
  Attestor,
  LEDGER_STREAM,
  LedgerWriter,
  PostgresEventStore,
  SnapshotStore,
  checkStoredEntry,
  GENESIS_HASH,
  inMemoryState,
  tieredState,
  type EventStore,
} from '@svc/ledger';
import { sql } from 'kysely';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { countingStore as counting, gatedStore, gatedTier } from '../support/eventStore';
import { executeInOrder, postCommand as post, registerCitizenCommand as register, voteCommand as vote } from '../support/ledgerModel';

async function verifyStoredChain(store: EventStore): Promise<number> {
  const all = await store.readForward(LEDGER_STREAM, 0, 100_000);
  let prev = GENESIS_HASH;
  all.forEach((stored, i) => {
    expect(stored.revision).toBe(i);
    const check = checkStoredEntry(stored.data, i, prev);
    if (!check.ok) throw new Error(`seq ${i}: ${check.reason}`);
    prev = check.entry.hash;
  });
  return all.length;
}

describe('the ledger writer', () => {
  let db: FreshDatabase;
  let databases: SqlDatabase[] = [];

  async function open(): Promise<{ database: SqlDatabase; store: PostgresEventStore; snapshots: SnapshotStore }> {
    const database = await openDatabase({ url: db.url, dataDir: tempDir('writer') });
    databases.push(database);
    return { database, store: await new PostgresEventStore(database).init(), snapshots: await new SnapshotStore(database).init() };
  }

  beforeEach(async () => {
    db = await freshDatabase('writer');
  });
  afterEach(async () => {
    await Promise.all(databases.map((d) => d.close()));
    databases = [];
    await db.drop();
  });

  it('groups concurrent commands into shared appends and keeps the chain intact', async () => {
    const { store } = await open();
    const counted = counting(store);
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(counted, ledgerModel);
    await writer.start();
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => writer.execute(register(String(i)))));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    const seqs = outcomes.flatMap((o) => (o.ok ? o.entries.map((e) => e.seq) : [])).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(counted.appends).toBeLessThan(300 / 4);
    expect(await verifyStoredChain(store)).toBe(300);
    expect((await new Attestor(store).attest()).verified).toMatchObject({ ok: true, checked: 300 });
  }, 60_000);

  it("commits a command's alongside work in its append's transaction, with each command's own entries, or neither", async () => {
    const { database, store } = await open();
    await sql`create table side (tag text primary key, seq bigint not null)`.execute(database.db);
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const note = (tag: string) => async (trx: Parameters<NonNullable<Parameters<typeof writer.executeAtHead>[1]>>[0], entries: Array<{ seq: number }>) => {
      await sql`insert into side (tag, seq) values (${tag}, ${entries.at(-1)!.seq})`.execute(trx);
    };
    // Batched together: each work sees its own command's entries, all in the one append.
    const outcomes = await Promise.all(['a', 'b', 'c'].map((tag) => writer.executeAtHead(register(tag), note(tag))));
    const seqOf = (o: (typeof outcomes)[number]) => (o.ok ? o.entries.at(-1)!.seq : -1);
    const rows = (await sql<{ tag: string; seq: string }>`select tag, seq from side order by tag`.execute(database.db)).rows.map((r) => [r.tag, Number(r.seq)]);
    expect(rows).toEqual([['a', seqOf(outcomes[0]!)], ['b', seqOf(outcomes[1]!)], ['c', seqOf(outcomes[2]!)]]);
    // A command that appends nothing runs nothing; a work that fails takes the append down with it.
    expect(await writer.executeAtHead(register('a2', 'handle-a'), note('refused'))).toMatchObject({ ok: true });
    expect(await writer.executeAtHead(register('a3', 'handle-a'), note('never'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    const failing = writer.executeAtHead(register('d'), async () => {
      throw new Error('the side write failed');
    });
    await expect(failing).rejects.toThrow('the side write failed');
    expect(await verifyStoredChain(store)).toBe(4);
    expect((await sql<{ tag: string }>`select tag from side order by tag`.execute(database.db)).rows.map((r) => r.tag)).toEqual(['a', 'b', 'c', 'refused']);
  });

  describe('a command that appends nothing, while a batch appends', () => {
    async function gatedWriter(): Promise<{ gated: ReturnType<typeof gatedStore>; writer: LedgerWriter<LedgerState, LedgerCommand, DecisionSeen> }> {
      const gated = gatedStore((await open()).store);
      const writer = new LedgerWriter(gated, ledgerModel);
      await writer.start();
      return { gated, writer };
    }

    it('is answered without waiting for the append', async () => {
      const { gated, writer } = await gatedWriter();
      await executeInOrder(writer, [register('a'), register('b'), post('a', 'p'), vote('b', 'p', 1)]);
      const append = gated.holdNextAppend('before');
      const batch = writer.execute(register('x'));
      await append.reached;
      expect(await writer.executeAtHead(vote('b', 'p', 1))).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hb' } });
      append.release();
      expect(await batch).toMatchObject({ ok: true, entries: [{ seq: 4 }] });
    });

    it('is answered while the writer loads what a batch needs from the tier', async () => {
      const { store } = await open();
      const tier = gatedTier(store.stateTier(LEDGER_STREAM));
      const writer = new LedgerWriter<LedgerState, LedgerCommand, DecisionSeen>(store, ledgerModel, {
        state: tieredState({ tier, hotKeys: 3, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) }),
      });
      await writer.start();
      await executeInOrder(writer, [register('a'), register('b'), post('a', 'p'), vote('b', 'p', 1)]);
      const load = tier.holdNextLoad();
      // A handle nobody has used is not in memory: the batch waits for the tier.
      const batch = writer.execute(register('x'));
      await load.reached;
      expect(await writer.executeAtHead(vote('b', 'p', 1))).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hb' } });
      load.release();
      expect(await batch).toMatchObject({ ok: true, entries: [{ seq: 4 }] });
    });

    it('waits for the append when it reads what the batch writes', async () => {
      const { gated, writer } = await gatedWriter();
      await executeInOrder(writer, [register('a'), register('b'), register('c'), post('a', 'p'), post('a', 'q'), vote('c', 'q', 1)]);
      const append = gated.holdNextAppend('before');
      const batch = writer.execute(vote('b', 'p', 1));
      await append.reached;
      let answered = false;
      const repeat = writer.executeAtHead(vote('b', 'p', 1)).then((outcome) => {
        answered = true;
        return outcome;
      });
      // Answered aside, after the same head read as `repeat` would have been, or a later one.
      expect(await writer.executeAtHead(vote('c', 'q', 1))).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hc' } });
      await new Promise(setImmediate);
      expect(answered).toBe(false);
      append.release();
      expect(await batch).toMatchObject({ ok: true, entries: [{ seq: 6 }] });
      expect(await repeat).toEqual({ ok: true, entries: [], seen: { actorHandle: 'hb' } });
    });

    it('is decided at the true head when another writer appended as many entries as the batch', async () => {
      const { gated, writer: one } = await gatedWriter();
      const two = new LedgerWriter<LedgerState, LedgerCommand>((await open()).store, ledgerModel);
      await two.start();
      await executeInOrder(one, [register('a'), register('b'), post('a', 'p'), vote('b', 'p', 1)]);
      await two.sync();
      const append = gated.holdNextAppend('before');
      const batch = one.execute(register('x'));
      await append.reached;
      expect(await two.execute(vote('b', 'p', -1))).toMatchObject({ ok: true, entries: [{ seq: 4 }] });
      // The store holds seq 4, where the batch held back would bring the head, but the entry is the other writer's.
      const read = gated.nextHeadRead();
      const answer = one.executeAtHead(vote('b', 'p', 1));
      expect(await read).toBe(4);
      append.release();
      expect(await answer).toMatchObject({ ok: true, entries: [{ data: { previous: -1, value: 1 } }], seen: { actorHandle: 'hb' } });
      expect(await batch).toMatchObject({ ok: true, entries: [{ seq: 5 }] });
    });
  });

  it('loads what a command queued behind an append will read cold while that append runs', async () => {
    const { store } = await open();
    const gated = gatedStore(store);
    const tier = store.stateTier(LEDGER_STREAM);
    const loads: string[][] = [];
    let loaded!: () => void;
    const handleLoaded = new Promise<void>((resolve) => (loaded = resolve));
    const countingTier = Object.create(tier) as typeof tier;
    countingTier.load = async (keys) => {
      const found = await tier.load(keys);
      loads.push(keys.map(({ map, key }) => `${map}:${key}`));
      if (keys.some(({ key }) => key === 'hy')) loaded();
      return found;
    };
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(gated, ledgerModel, {
      state: tieredState({ tier: countingTier, hotKeys: 3, lockStream: (trx) => store.lockStream(trx, LEDGER_STREAM) }),
    });
    await writer.start();
    await executeInOrder(writer, [register('a'), register('b')]);
    const append = gated.holdNextAppend('before');
    const first = writer.execute(register('x'));
    await append.reached;
    const second = writer.execute(register('y'));
    // Loaded while the first batch's append is still held.
    await handleLoaded;
    const before = loads.length;
    append.release();
    expect(await first).toMatchObject({ ok: true, entries: [{ seq: 2 }] });
    expect(await second).toMatchObject({ ok: true, entries: [{ seq: 3 }] });
    // The second batch read nothing more.
    expect(loads.slice(before)).toEqual([]);
  });

  it('refuses one command of a batch without touching the others', async () => {
    const { store } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const [a, b, c] = await Promise.all([writer.execute(register('1', 'same')), writer.execute(register('2', 'SAME')), writer.execute(register('3'))]);
    expect(a.ok).toBe(true);
    expect(b).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(c.ok).toBe(true);
    expect(await verifyStoredChain(store)).toBe(2);
  });

  it('stays correct with two writers appending at once: catch up, decide again, one winner per handle', async () => {
    const one = await open();
    const two = await open();
    const first = new LedgerWriter<LedgerState, LedgerCommand>(one.store, ledgerModel);
    const second = new LedgerWriter<LedgerState, LedgerCommand>(two.store, ledgerModel);
    await Promise.all([first.start(), second.start()]);
    // Both writers race for the same 40 handles, each with its own agent ids and wallets.
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => [
        first.execute(register(`a${i}`, `handle${i}`)),
        second.execute(register(`b${i}`, `HANDLE${i}`)),
      ]).flat(),
    );
    const accepted = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    expect(accepted).toHaveLength(40);
    expect(refused.every((r) => !r.ok && r.rejection.code === 'handle_taken')).toBe(true);
    expect(await verifyStoredChain(one.store)).toBe(40);
    const handles = (await one.store.readForward(LEDGER_STREAM, 0, 100)).map((e) => JSON.parse(e.data).data.handle.toLowerCase());
    expect(new Set(handles).size).toBe(40);
  }, 60_000);

  it('starts from a snapshot and reads only the tail of the ledger', async () => {
    const { store, snapshots } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: inMemoryState({ snapshots, snapshotEvery: 10 }) });
    await writer.start();
    for (let i = 0; i < 25; i++) await writer.execute(register(String(i)));
    await writer.saveSnapshot();
    await writer.execute(register('25'));
    await writer.execute(register('26'));

    const counted = counting(store);
    const restarted = new LedgerWriter<LedgerState, LedgerCommand>(counted, ledgerModel, { state: inMemoryState({ snapshots }) });
    await restarted.start();
    // One read checks the snapshot's head is stored (seq 24); the rest is the tail from 25.
    expect(counted.reads).toEqual([24, 25]);
    expect(restarted.head.seq).toBe(26);
    expect(await restarted.execute(register('x', 'h3'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await restarted.execute(register('x', 'h26'))).toMatchObject({ ok: false, rejection: { code: 'handle_taken' } });
    expect(await restarted.execute(register('27'))).toMatchObject({ ok: true, entries: [{ seq: 27 }] });
    expect(await verifyStoredChain(store)).toBe(28);
  }, 60_000);

  it('reports the first changed stored byte as the first bad seq, even inside a verified prefix', async () => {
    const { store, database } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    for (let i = 0; i < 12; i++) await writer.execute(register(String(i)));
    const attestor = new Attestor(store);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: 12 });
    await database.db
      .updateTable('es.events')
      .set({ data: (eb: any) => eb.fn('replace', [eb.ref('data'), eb.val('"h5"'), eb.val('"h6"')]) } as any)
      .where('revision', '=', 5)
      .execute();
    const after = await attestor.attest();
    expect(after.verified).toMatchObject({ ok: false, checked: 5, first_bad_seq: 5 });
    expect(after.length).toBe(12);
  }, 60_000);

  it('remembers the verified prefix across attestors, and still sees a change inside it', async () => {
    const { store, snapshots, database } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    for (let i = 0; i < 10; i++) await writer.execute(register(String(i)));
    expect((await new Attestor(store, snapshots).attest()).verified).toMatchObject({ ok: true, checked: 10 });
    await writer.execute(register('10'));
    const counted = counting(store);
    const restarted = new Attestor(counted, snapshots);
    expect((await restarted.attest()).verified).toMatchObject({ ok: true, checked: 11 });
    // It checked the end of the remembered prefix, then read only the tail.
    expect(counted.reads).toEqual([9, 10]);
    await sql`update es.events set data = replace(data, '"h3"', '"hZ"') where revision = 3`.execute(database.db);
    expect((await new Attestor(store, snapshots).attest()).verified).toMatchObject({ ok: false, first_bad_seq: 3 });
  }, 60_000);

  it('notices a truncated and rewritten store inside the verified prefix', async () => {
    const { store, database } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    for (let i = 0; i < 6; i++) await writer.execute(register(String(i)));
    const attestor = new Attestor(store);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: 6 });
    const rows = await sql<{ stream: string; revision: number; event_id: string; type: string; data: string }>`select stream, revision, event_id, type, data from es.events order by revision`.execute(database.db);
    await sql`truncate es.events`.execute(database.db);
    for (const row of rows.rows) {
      const data = row.revision === 2 ? row.data.replace('"h2"', '"hX"') : row.data;
      await sql`insert into es.events (stream, revision, event_id, type, data) values (${row.stream}, ${row.revision}, ${row.event_id}, ${row.type}, ${data})`.execute(database.db);
    }
    expect((await attestor.attest()).verified).toMatchObject({ ok: false, first_bad_seq: 2 });
  }, 60_000);

  it('ignores a snapshot whose head the event store does not hold', async () => {
    const { store, snapshots } = await open();
    await snapshots.save({ name: LEDGER_STREAM, version: ledgerModel.snapshotVersion, seq: 41, hash: 'f'.repeat(64), at: 1, state: ledgerModel.snapshot(ledgerModel.initialState()) });
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel, { state: inMemoryState({ snapshots }) });
    await writer.start();
    expect(writer.head.seq).toBe(-1);
    expect(await writer.execute(register('1'))).toMatchObject({ ok: true, entries: [{ seq: 0 }] });
  }, 60_000);
});
