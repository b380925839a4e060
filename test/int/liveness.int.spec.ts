import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Liveness, holderGone, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { ChainOutbox, IdempotencyStore, idempotencyRequestHash, Vault, type NewOutboxRow } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { until } from '../support/until';
import { startChild } from '../support/spawn';

/** Any key: what is tested is how requests compare under one. */
const HASH_KEY = Buffer.alloc(32, 1);

jest.setTimeout(60_000);

const HASH = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/transfer', { to: 'bob', amount: 1 });
const MINUTE = 60_000;

let n = 0;
function outboxRow(extra: Partial<NewOutboxRow> = {}): NewOutboxRow {
  n += 1;
  return {
    id: `act_live_${n}`,
    attemptId: `attempt_${n}`,
    agentId: 'agent_1',
    action: 'transfer',
    record: { type: 'RecordAction', agentId: 'agent_1', data: { action: 'transfer', wallet: 'W1', details: {} } },
    summary: { amount: n },
    // Far longer than the test: only the holder's death can free these rows.
    leaseMs: 10 * MINUTE,
    ...extra,
  };
}

const gone = async (database: SqlDatabase, holder: number) =>
  (await sql<{ gone: boolean }>`select ${holderGone('h')} as gone from (select ${holder}::int as h) x`.execute(database.db)).rows[0]!.gone;

/**
 * A process that dies leaves its rows to whoever comes next at once, not when their leases run out: every row
 * names its holder, whose liveness is a session lock the server drops with the dead process's connection.
 */
describe('work held by a process that died is taken over at once (PostgreSQL)', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  const livenesses: Liveness[] = [];
  const stores: IdempotencyStore[] = [];
  const masterKey = randomBytes(32);

  /** Another process: its own liveness, its own stores, over the same database. */
  async function anotherProcess(): Promise<{ liveness: Liveness; idempotency: IdempotencyStore; outbox: ChainOutbox }> {
    const liveness = await Liveness.start(database);
    livenesses.push(liveness);
    const idempotency = new IdempotencyStore(database, masterKey, { liveness });
    stores.push(idempotency);
    return { liveness, idempotency, outbox: new ChainOutbox(database, 'vault', liveness) };
  }

  beforeAll(async () => {
    db = await freshDatabase('liveness');
    database = await openDatabase({ url: db.url, dataDir: tempDir('liveness'), poolSize: 8 });
    await new Vault(database, masterKey).init();
    await new ChainOutbox(database).init();
  });
  afterAll(async () => {
    stores.forEach((s) => s.close());
    await Promise.all(livenesses.map((l) => l.stop()));
    await database?.close();
    await db?.drop();
  });

  it('knows a live holder from a gone one, and a row without a holder is never judged gone', async () => {
    const { liveness } = await anotherProcess();
    expect(await gone(database, liveness.holder)).toBe(false);
    expect((await sql<{ gone: boolean }>`select ${holderGone('h')} as gone from (select null::int as h) x`.execute(database.db)).rows[0]!.gone).toBe(false);
    await liveness.stop();
    expect(await gone(database, liveness.holder)).toBe(true);
  });

  it('sees a SIGKILLed process gone as soon as it is dead', async () => {
    const child = await startChild('test/support/livenessChild.ts', [db.url], {}, 'holding');
    const holder = JSON.parse(child.output.find((line) => line.includes('"msg":"holding"'))!).holder as number;
    expect(await gone(database, holder)).toBe(false);
    const killedAt = Date.now();
    await child.kill();
    await until('the dead holder to be seen gone', 5_000, async () => ((await gone(database, holder)) ? true : undefined));
    // The server drops the session of a connection the kernel closed: well under a second.
    expect(Date.now() - killedAt).toBeLessThan(2_000);
  });

  it('takes over an Idempotency-Key whose holder died, though its lease has long to run', async () => {
    const [first, second] = [await anotherProcess(), await anotherProcess()];
    const key = randomUUID();
    const begun = await first.idempotency.begin('agent_1', key, HASH, { leaseMs: 10 * MINUTE });
    expect(begun.kind).toBe('run');
    // Alive: the retry waits and then answers busy.
    expect(await second.idempotency.begin('agent_1', key, HASH, { waitMs: 0 })).toEqual({ kind: 'busy' });
    first.idempotency.close();
    await first.liveness.stop();
    const retry = await second.idempotency.begin('agent_1', key, HASH, { waitMs: 0 });
    expect(retry).toMatchObject({ kind: 'run', resumed: true, createdAt: (begun as { createdAt: number }).createdAt });
    // The new holder is alive: a third process waits on it.
    const third = await anotherProcess();
    expect(await third.idempotency.begin('agent_1', key, HASH, { waitMs: 0 })).toEqual({ kind: 'busy' });
    // The dead attempt can no longer complete what it began.
    expect(await first.idempotency.complete('agent_1', key, (begun as { attempt: string }).attempt, { status: 200, body: {}, headers: {} })).toBe(false);
  });

  it('lets a recovery pass claim an outbox row whose holder died, and only then', async () => {
    const [first, second] = [await anotherProcess(), await anotherProcess()];
    const row = outboxRow();
    expect(await first.outbox.reserve(row)).toEqual({ ok: true });
    expect(await second.outbox.get(row.id)).toMatchObject({ state: 'reserved', abandoned: false });
    expect(await second.outbox.claimDue('claim_1', 10 * MINUTE)).toBeUndefined();
    await first.liveness.stop();
    expect(await second.outbox.get(row.id)).toMatchObject({ abandoned: true });
    expect(await second.outbox.claimDue('claim_2', 10 * MINUTE)).toMatchObject({ id: row.id, attemptId: 'claim_2', abandoned: false });
    // Claimed, it is the second process's: nobody else takes it while that one lives.
    const third = await anotherProcess();
    expect(await third.outbox.claimDue('claim_3', 10 * MINUTE)).toBeUndefined();
    expect(await third.outbox.get(row.id)).toMatchObject({ abandoned: false });
  });

  it('keeps a row written without a holder until its lease runs out, as before', async () => {
    const legacy = new ChainOutbox(database);
    const row = outboxRow();
    await legacy.reserve(row);
    const { outbox } = await anotherProcess();
    expect(await outbox.get(row.id)).toMatchObject({ abandoned: false });
    await database.db.updateTable('vault.chain_outbox').set({ lease_until: sql`now()` }).where('id', '=', row.id).execute();
    expect(await outbox.get(row.id)).toMatchObject({ abandoned: true });
  });
});

/** `npm start`'s shape: one process, one embedded session, whose lock dies with it. */
describe('liveness on the embedded database (PGlite)', () => {
  let database: SqlDatabase;

  beforeAll(async () => {
    database = await openDatabase({ dataDir: tempDir('liveness-pglite') });
    await new ChainOutbox(database).init();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('holds while the process lives and lets go when it stops', async () => {
    const [mine, other] = [await Liveness.start(database), await Liveness.start(database)];
    expect(mine.holder).not.toBe(other.holder);
    expect(await gone(database, mine.holder)).toBe(false);
    const row = outboxRow();
    await new ChainOutbox(database, 'vault', mine).reserve(row);
    const outbox = new ChainOutbox(database, 'vault', other);
    expect(await outbox.claimDue('c1', MINUTE)).toBeUndefined();
    await mine.stop();
    expect(await gone(database, mine.holder)).toBe(true);
    expect(await outbox.claimDue('c2', MINUTE)).toMatchObject({ id: row.id });
    await other.stop();
  });
});
