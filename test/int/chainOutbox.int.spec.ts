import { sql } from 'kysely';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { ChainOutbox, type NewOutboxRow } from '@svc/vault';
import { countPgSends } from '../../scripts/bench/pgSends';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

jest.setTimeout(30_000);

let n = 0;
function row(extra: Partial<NewOutboxRow> = {}): NewOutboxRow {
  n += 1;
  return {
    id: `act_${n}`,
    attemptId: `attempt_${n}`,
    agentId: 'agent_1',
    action: 'transfer',
    record: { type: 'RecordAction', agentId: 'agent_1', data: { action: 'transfer', wallet: 'W1', details: {} } },
    summary: { amount: n },
    leaseMs: 60_000,
    ...extra,
  };
}
const signed = (signature: string) => ({ signature, transaction: 'AQ==', messageHash: `hash_${signature}`, blockhash: 'bh', lastValidBlockHeight: 100, leaseMs: 60_000 });

describe('the on-chain outbox: every state move, against PostgreSQL', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let outbox: ChainOutbox;

  beforeAll(async () => {
    db = await freshDatabase('chain_outbox');
    database = await openDatabase({ url: db.url, dataDir: tempDir('chain-outbox'), applicationName: 'test' });
    outbox = await new ChainOutbox(database).init();
  });
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  it('reserved → sent → done, only by the attempt that holds the row, each move once', async () => {
    const r = row();
    expect(await outbox.reserve(r)).toEqual({ ok: true });
    expect(await outbox.markSigned(r.id, 'someone_else', signed('s1'))).toBeUndefined();
    expect(await outbox.markSigned(r.id, r.attemptId, signed('s1'))).toMatchObject({ id: r.id, state: 'sent', signature: 's1', lastValidBlockHeight: 100 });
    expect(await outbox.markSigned(r.id, r.attemptId, signed('s1'))).toBeUndefined();
    // Signed bytes are never thrown away: a sent row cannot be released, only settled by the chain.
    expect(await outbox.release(r.id, r.attemptId)).toBe(false);
    expect(await outbox.markDone(r.id, { seq: 7, hash: 'h' })).toBe(true);
    expect(await outbox.markDone(r.id, { seq: 8, hash: 'x' })).toBe(false);
    expect(await outbox.markFailed(r.id, { code: 'tx_failed', message: 'late' })).toBe(false);
    expect(await outbox.get(r.id)).toMatchObject({ state: 'done', signature: 's1', receipt: { seq: 7, hash: 'h' }, error: null });
  });

  it('closes the rows of one transaction in one UPDATE, each told whether it moved', async () => {
    const [a, b, c] = [row(), row(), row()];
    for (const [r, signature] of [[a, 'ja'], [b, 'jb'], [c, 'jc']] as const) {
      await outbox.reserve(r);
      await outbox.markSigned(r.id, r.attemptId, signed(signature));
    }
    expect(await outbox.markDone(c.id, { seq: 1, hash: 'before' })).toBe(true);
    const sends = countPgSends();
    const moved = await database.db.transaction().execute((trx) =>
      Promise.all([outbox.markDoneIn(trx, a.id, { seq: 2, hash: 'ha' }), outbox.markDoneIn(trx, b.id, { seq: 3, hash: 'hb' }), outbox.markDoneIn(trx, c.id, { seq: 4, hash: 'hc' })]),
    );
    expect(moved).toEqual([true, true, false]);
    expect(sends().statements.filter(({ text }) => /^\s*update/i.test(text))).toEqual([expect.objectContaining({ count: 1 })]);
    expect(await outbox.get(a.id)).toMatchObject({ state: 'done', receipt: { seq: 2, hash: 'ha' } });
    expect(await outbox.get(b.id)).toMatchObject({ state: 'done', receipt: { seq: 3, hash: 'hb' } });
    expect(await outbox.get(c.id)).toMatchObject({ state: 'done', receipt: { seq: 1, hash: 'before' } });
    // Rolled back with its transaction.
    const d = row();
    await outbox.reserve(d);
    await outbox.markSigned(d.id, d.attemptId, signed('jd'));
    await expect(
      database.db.transaction().execute(async (trx) => {
        expect(await outbox.markDoneIn(trx, d.id, { seq: 5, hash: 'hd' })).toBe(true);
        throw new Error('the append failed');
      }),
    ).rejects.toThrow('the append failed');
    expect(await outbox.get(d.id)).toMatchObject({ state: 'sent', receipt: null });
  });

  it('a handout becomes sent once, with the signature it came back with; an unsent one is released', async () => {
    const handout = { transaction: 'AQ==', messageHash: 'm1', reference: 'R1', minSlot: 5, blockhash: 'bh', lastValidBlockHeight: 9, leaseMs: 0 };
    const r = row();
    await outbox.reserve(r);
    expect(await outbox.markUnsigned(r.id, r.attemptId, handout)).toMatchObject({ state: 'unsigned', reference: 'R1' });
    expect(await outbox.byMessage('agent_1', 'm1')).toMatchObject({ id: r.id, state: 'unsigned', reference: 'R1', minSlot: 5 });
    expect(await outbox.byMessage('agent_2', 'm1')).toBeUndefined();
    expect(await outbox.markUnsignedSent(r.id, { signature: 's2', transaction: 'AQ==', leaseMs: 0 })).toBe(true);
    expect(await outbox.markUnsignedSent(r.id, { signature: 's3', transaction: 'AQ==', leaseMs: 0 })).toBe(false);
    expect(await outbox.bySignature('s2')).toMatchObject({ id: r.id, state: 'sent' });

    const unsent = row();
    await outbox.reserve(unsent);
    await outbox.markUnsigned(unsent.id, unsent.attemptId, { ...handout, messageHash: 'm2' });
    expect(await outbox.release(unsent.id, null)).toBe(true);
    expect(await outbox.get(unsent.id)).toBeUndefined();
  });

  it('one live action per hold: a failed one frees it, a done one keeps it', async () => {
    const first = row({ holdKey: 'bounty:b1' });
    expect(await outbox.reserve(first)).toEqual({ ok: true });
    const second = row({ holdKey: 'bounty:b1' });
    expect(await outbox.reserve(second)).toMatchObject({ ok: false, conflict: 'hold', holder: { id: first.id, state: 'reserved' } });
    await outbox.markSigned(first.id, first.attemptId, signed('s4'));
    expect(await outbox.markFailed(first.id, { code: 'send_failed', message: 'expired', details: { logs: ['x'] } })).toBe(true);
    expect(await outbox.byHold('bounty:b1')).toBeUndefined();
    expect(await outbox.get(first.id)).toMatchObject({ state: 'failed', error: { code: 'send_failed', details: { logs: ['x'] } } });
    expect(await outbox.reserve(second)).toEqual({ ok: true });
    await outbox.markSigned(second.id, second.attemptId, signed('s5'));
    await outbox.markDone(second.id, null);
    expect(await outbox.reserve(row({ holdKey: 'bounty:b1' }))).toMatchObject({ ok: false, conflict: 'hold', holder: { id: second.id, state: 'done' } });
  });

  it('one row per citizen and idempotency key, whatever its state', async () => {
    const r = row({ idempotencyKey: 'k1' });
    expect(await outbox.reserve(r)).toEqual({ ok: true });
    expect(await outbox.reserve(row({ idempotencyKey: 'k1' }))).toMatchObject({ ok: false, conflict: 'idempotency', holder: { id: r.id } });
    expect(await outbox.reserve(row({ idempotencyKey: 'k1', agentId: 'agent_2' }))).toEqual({ ok: true });
    // Fifty concurrent reservations under one key: exactly one row.
    const results = await Promise.all(Array.from({ length: 50 }, () => outbox.reserve(row({ idempotencyKey: 'k50' }))));
    expect(results.filter((x) => x.ok)).toHaveLength(1);
    const { count } = await sql<{ count: string }>`select count(*) from vault.chain_outbox where idempotency_key = 'k50'`.execute(database.db).then((x) => x.rows[0]!);
    expect(Number(count)).toBe(1);
  });

  it('recovery claims each due row once across processes, takes it under a new attempt, and leaves live leases alone', async () => {
    await sql`update vault.chain_outbox set lease_until = now() + interval '1 hour'`.execute(database.db);
    const due = row({ leaseMs: 0 });
    await outbox.reserve(due);
    await outbox.markSigned(due.id, due.attemptId, { ...signed('s6'), leaseMs: 0 });
    const live = row();
    await outbox.reserve(live);
    const second = new ChainOutbox(database);
    const claims = await Promise.all([outbox.claimDue('a1', 60_000), second.claimDue('a2', 60_000)]);
    const taken = claims.filter((c) => c !== undefined);
    expect(taken).toEqual([expect.objectContaining({ id: due.id, state: 'sent', signature: 's6' })]);
    expect(['a1', 'a2']).toContain(taken[0]!.attemptId);
    // Its lease is fresh now: the next pass does not take it again.
    expect(await outbox.claimDue('a3', 60_000)).toBeUndefined();
  });

  it('carries the retired award outbox over: a sent, unrecorded award payment is settled like any action', async () => {
    await sql`create schema legacy`.execute(database.db);
    // The award outbox as the last release left it.
    await sql`create table legacy.award_outbox (
        bounty_id text primary key, attempt_id text not null, poster_id text not null, submission_id text not null,
        state text not null, signature text unique, transaction text, blockhash text, last_valid_block_height bigint,
        lease_until timestamptz not null, error text, created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(), reference text, min_slot bigint)`.execute(database.db);
    await sql`insert into legacy.award_outbox (bounty_id, attempt_id, poster_id, submission_id, state, signature, transaction, blockhash, last_valid_block_height, lease_until)
      values ('bounty_1', 'a', 'agent_9', 'sub_1', 'sent', 'sig_award', 'AQ==', 'bh', 42, now()),
             ('bounty_2', 'b', 'agent_9', 'sub_2', 'done', 'sig_done', 'AQ==', 'bh', 42, now())`.execute(database.db);

    const legacy = await new ChainOutbox(database, 'legacy').init();

    expect(await legacy.byHold('bounty:bounty_1')).toMatchObject({
      state: 'sent',
      action: 'award_payment',
      agentId: 'agent_9',
      signature: 'sig_award',
      lastValidBlockHeight: 42,
      record: { type: 'AwardBounty', agentId: 'agent_9', data: { bounty_id: 'bounty_1', submission_id: 'sub_1' } },
    });
    expect(await legacy.byHold('bounty:bounty_2')).toMatchObject({ state: 'done', signature: 'sig_done' });
    expect(await legacy.claimDue('r', 60_000)).toMatchObject({ signature: 'sig_award' });
    const { rows } = await sql<{ t: string | null }>`select to_regclass('legacy.award_outbox')::text as t`.execute(database.db);
    expect(rows[0]!.t).toBeNull();
  });
});
