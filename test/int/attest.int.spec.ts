import { sql } from 'kysely';
import pg from 'pg';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { Attestor, LedgerWriter, PostgresEventStore, SnapshotStore, checkStoredLink, sealAndEncode, LEDGER_STREAM, type LedgerEntry } from '@svc/ledger';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { until } from '../support/until';
import { registerCitizenCommand as register } from '../support/ledgerModel';

// A superuser who bypasses the triggers leaves no tamper mark: the incremental answer cannot see such a
// change inside its verified prefix, and only a full pass from seq 0 can.

const ENTRIES = 40;
const TAMPERED_SEQ = 11;
const GATE = 4_242_001;

describe('full re-verification of the ledger chain', () => {
  let db: FreshDatabase;
  let databases: SqlDatabase[] = [];

  async function open(): Promise<{ database: SqlDatabase; store: PostgresEventStore; snapshots: SnapshotStore }> {
    const database = await openDatabase({ url: db.url, dataDir: tempDir('attest') });
    databases.push(database);
    return { database, store: await new PostgresEventStore(database).init(), snapshots: await new SnapshotStore(database).init() };
  }

  /** Changes stored rows the way a superuser can: with every trigger of the session off, so no mark is left. */
  async function bypassingTriggers(database: SqlDatabase, statement: ReturnType<typeof sql>): Promise<void> {
    await database.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await statement.execute(trx);
    });
    const marks = await sql<{ n: string }>`select count(*) as n from es.tamper_marks`.execute(database.db);
    expect(Number(marks.rows[0]!.n)).toBe(0);
  }

  async function fullPass(attestor: Attestor) {
    const { started, done } = await attestor.startFull('request');
    expect(started).toBe(true);
    await done;
    return attestor.attest();
  }

  beforeEach(async () => {
    db = await freshDatabase('attest');
    const { store } = await open();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    for (let i = 0; i < ENTRIES; i++) await writer.execute(register(i));
  });
  afterEach(async () => {
    await Promise.all(databases.map((d) => d.close()));
    databases = [];
    await db.drop();
  });

  it('says which range it checked now and which it took from earlier checks', async () => {
    const { store, snapshots } = await open();
    const first = await new Attestor(store, snapshots).attest();
    expect(first.verified).toEqual({ ok: true, checked: ENTRIES, checked_now: { from: 0, to: ENTRIES - 1 } });
    expect(first.full).toBeUndefined();

    const again = await new Attestor(store, snapshots).attest();
    expect(again.verified).toEqual({ ok: true, checked: ENTRIES, from_earlier: { from: 0, to: ENTRIES - 1 } });
  });

  it('finds a row changed inside the verified prefix with the triggers bypassed, and every restart still reports it', async () => {
    const { store, snapshots, database } = await open();
    const attestor = new Attestor(store, snapshots);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });
    const [original] = await store.readForward(LEDGER_STREAM, TAMPERED_SEQ, 1);
    const storedHash = JSON.parse(original!.data).hash as string;

    await bypassingTriggers(database, sql`update es.events set data = replace(data, '"model":"m"', '"model":"x"') where revision = ${TAMPERED_SEQ}`);

    // The incremental answer trusts its prefix: the change is invisible to it, here and after a restart.
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES, from_earlier: { from: 0, to: ENTRIES - 1 } });
    expect((await new Attestor(store, snapshots).attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });

    const after = await fullPass(attestor);
    expect(after.full).toMatchObject({
      state: 'finished',
      trigger: 'request',
      head_at_start: ENTRIES - 1,
      checked: TAMPERED_SEQ,
      ok: false,
      first_bad: { seq: TAMPERED_SEQ, reason: 'hash does not match the content', stored_hash: storedHash },
    });
    const [tampered] = await store.readForward(LEDGER_STREAM, TAMPERED_SEQ, 1);
    const expected = checkStoredLink(tampered!.data, TAMPERED_SEQ, JSON.parse(tampered!.data).prev);
    expect(expected).toMatchObject({ ok: false, stored_hash: storedHash });
    expect(after.full!.first_bad!.expected_hash).toBe(expected.ok ? undefined : expected.expected_hash);
    expect(after.full!.first_bad!.expected_hash).not.toBe(storedHash);
    // From then on the default answer reports the bad entry too.
    expect(after.verified).toMatchObject({ ok: false, first_bad_seq: TAMPERED_SEQ, checked: TAMPERED_SEQ, last_full_ok: false });
    expect(after.verified.last_full_at).toBe(after.full!.finished_at);

    const restarted = await new Attestor(store, snapshots).attest();
    expect(restarted.full).toEqual(after.full);
    expect(restarted.verified).toMatchObject({ ok: false, first_bad_seq: TAMPERED_SEQ, last_full_at: after.full!.finished_at, last_full_ok: false });
  });

  it('reports a deleted row as a gap at its seq', async () => {
    const { store, snapshots, database } = await open();
    const attestor = new Attestor(store, snapshots);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });

    await bypassingTriggers(database, sql`delete from es.events where revision = 5`);

    expect((await attestor.attest()).verified).toMatchObject({ ok: true });
    const after = await fullPass(attestor);
    expect(after.full).toMatchObject({ ok: false, checked: 5, first_bad: { seq: 5, reason: 'revision 5 is missing (the next stored is 6)' } });
    expect(after.verified).toMatchObject({ ok: false, first_bad_seq: 5 });
  });

  it('reports a row re-sealed onto a forged prev as a broken link, with both hashes', async () => {
    const { store, snapshots, database } = await open();
    const attestor = new Attestor(store, snapshots);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });
    const [before, row] = await store.readForward(LEDGER_STREAM, 7, 2);
    const forged = 'f'.repeat(64);
    const { bytes } = sealAndEncode(forged, JSON.parse(row!.data) as LedgerEntry);

    await bypassingTriggers(database, sql`update es.events set data = ${bytes} where revision = 8`);

    const report = (await fullPass(attestor)).full!;
    expect(report).toMatchObject({
      ok: false,
      checked: 8,
      first_bad: { seq: 8, reason: 'prev does not match the previous hash', expected_hash: JSON.parse(before!.data).hash, stored_hash: forged },
    });
  });

  /**
   * A view over the events that a worker's reads pass through only while the test's advisory lock is free:
   * it holds the pass's own connection and nothing else (the serving pool reads es.events directly).
   */
  async function gatedStore(database: SqlDatabase, store: PostgresEventStore): Promise<{ store: PostgresEventStore; release: () => Promise<void> }> {
    await sql.raw(`create function es.gate() returns boolean language plpgsql as $$ begin perform pg_advisory_xact_lock_shared(${GATE}); return true; end $$`).execute(database.db);
    await sql.raw('create view es.gated_events as select * from es.events where es.gate()').execute(database.db);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('select pg_advisory_lock($1)', [GATE]);
    const gated = Object.create(store) as PostgresEventStore;
    gated.scanSource = () => ({ ...store.scanSource()!, table: 'es.gated_events' });
    return { store: gated, release: () => holder.end() };
  }

  /** The pass's own connection, once it waits at the gate. */
  function waitingPass(database: SqlDatabase) {
    return until('the pass to read through its own connection', 20_000, async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where application_name = 'svc-attest' and wait_event_type = 'Lock' and datname = current_database()`.execute(database.db);
      return rows[0]!.n === 1 ? true : undefined;
    });
  }

  it('passes an intact chain, lets one pass run at a time across processes, and follows the head it started at', async () => {
    const one = await open();
    const two = await open();
    // The first process's pass waits at its first read until the second one has tried to start its own.
    const gate = await gatedStore(one.database, one.store);
    const a = new Attestor(gate.store, one.snapshots);
    const b = new Attestor(two.store, two.snapshots);
    const started = await a.startFull('schedule');
    expect(started.started).toBe(true);
    await waitingPass(two.database);
    expect(await b.fullRunning()).toBe(true);
    expect((await b.startFull('request')).started).toBe(false);
    expect((await b.attest()).full).toMatchObject({ state: 'running', checked: 0, head_at_start: ENTRIES - 1 });
    await gate.release();
    await started.done;
    const report = await b.attest();
    expect(report.full).toMatchObject({ state: 'finished', trigger: 'schedule', ok: true, head_at_start: ENTRIES - 1, checked: ENTRIES });
    expect(report.full!.first_bad).toBeUndefined();
    expect(report.verified).toMatchObject({ ok: true, checked: ENTRIES, last_full_ok: true });
    expect(await b.fullRunning()).toBe(false);
  });

  it('answers a pass that finishes while an answer is being made as it was when the answer took its result', async () => {
    const { database, store, snapshots } = await open();
    const gate = await gatedStore(database, store);
    // The answer waits inside, after reading the pass's record, until the pass has finished.
    let passDone: Promise<void> = Promise.resolve();
    const slow = Object.create(gate.store) as PostgresEventStore;
    slow.lowestTamperedRevision = async (stream) => {
      await passDone;
      return store.lowestTamperedRevision(stream);
    };
    const attestor = new Attestor(slow, snapshots);
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });
    await bypassingTriggers(database, sql`update es.events set data = replace(data, '"model":"m"', '"model":"x"') where revision = ${TAMPERED_SEQ}`);
    const run = await attestor.startFull('request');
    await waitingPass(database);
    passDone = run.done!;
    const answering = attestor.attest();
    await gate.release();
    const answer = await answering;
    // Still running when its record was read, so its finding is not in this answer's prefix yet: it must
    // not be reported as finished beside a verified prefix that does not include it.
    expect(answer.full).toMatchObject({ state: 'running' });
    expect(answer.verified).toMatchObject({ ok: true });
    const next = await attestor.attest();
    expect(next.full).toMatchObject({ state: 'finished', ok: false, first_bad: { seq: TAMPERED_SEQ } });
    expect(next.verified).toMatchObject({ ok: false, first_bad_seq: TAMPERED_SEQ, last_full_ok: false });
  });

  it('reads over its own connection in a worker thread, which a stop ends: the pass is abandoned and another may start', async () => {
    const { database, store, snapshots } = await open();
    const gate = await gatedStore(database, store);
    const attestor = new Attestor(gate.store, snapshots);
    const run = await attestor.startFull('request');
    expect(run.started).toBe(true);
    await waitingPass(database);
    // While the pass's connection waits, the process's own pool still answers.
    expect((await attestor.attest()).verified).toMatchObject({ ok: true, checked: ENTRIES });
    const stopped = attestor.stop();
    await gate.release();
    await stopped;
    const after = new Attestor(store, snapshots);
    expect((await after.attest()).full).toMatchObject({ state: 'abandoned', trigger: 'request' });
    expect(await after.fullRunning()).toBe(false);
    const next = await after.startFull('request');
    expect(next.started).toBe(true);
    await next.done;
    expect((await after.attest()).full).toMatchObject({ state: 'finished', ok: true, checked: ENTRIES });
  });
});

describe('full re-verification on PGlite (the embedded default)', () => {
  let database: SqlDatabase;

  afterAll(async () => {
    await database?.close();
  });

  it('claims, records and reports a pass as on PostgreSQL', async () => {
    database = await openDatabase({ dataDir: tempDir('attest-pglite') });
    const store = await new PostgresEventStore(database).init();
    const snapshots = await new SnapshotStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    for (let i = 0; i < 5; i++) await writer.execute(register(i));
    const attestor = new Attestor(store, snapshots);
    const run = await attestor.startFull('request');
    expect(run.started).toBe(true);
    expect((await new Attestor(store, snapshots).startFull('request')).started).toBe(false);
    await run.done;
    const restarted = await new Attestor(store, snapshots).attest();
    expect(restarted.full).toMatchObject({ state: 'finished', ok: true, checked: 5 });
    const next = await new Attestor(store, snapshots).startFull('request');
    expect(next.started).toBe(true);
    await next.done;
  }, 60_000);
});
