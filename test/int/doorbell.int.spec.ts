import type { LookupFunction } from 'node:net';
import { sql } from 'kysely';
import type { SqlDatabase } from '@svc/readmodel';
import { MUTE_AFTER_FAILURES, type DoorbellStore } from '@svc/vault';
import { REFUSED_ADDRESS_ERROR } from '@svc/app-workers';
import { RECEIVER_NAME, timestampedSignature, type DoorbellReceiver } from '../support/doorbellReceiver';
import { AGENT, DoorbellRig, OTHER_AGENT, SECRETS } from '../support/doorbellRig';

const resolvingTo =
  (address: string): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };

jest.setTimeout(30_000);

describe('doorbell delivery against PostgreSQL and a real HTTPS receiver', () => {
  const rig = new DoorbellRig();
  const { logLines, attempts, append, announce, post, worker, register, stopWorkers, delivered, deliveryRows } = rig;
  let database: SqlDatabase;
  let store: DoorbellStore;
  let receiver: DoorbellReceiver;

  beforeAll(async () => {
    ({ database, store, receiver } = await rig.start('doorbell_int'));
  }, 30_000);
  afterEach(() => rig.reset());
  afterAll(() => rig.close());

  it('rings each matching doorbell once per post, action and bounty after its registration, signed over the raw body', async () => {
    const before = await post(0);
    const all = await register('/all', { secret: SECRETS[0] });
    await register('/bounty', { kinds: ['bounty'] });
    expect(all.afterSeq).toBe(before);
    await worker();
    const citizen = await append('CitizenRegistered', { agent_id: 'agent_x', handle: 'x' });
    const postSeq = await post(1);
    const actionSeq = await append('ActionRecorded', { action: 'buy', signature: 'sig1', wallet: 'W', details: {} });
    const bountySeq = await append('BountyPosted', { bounty_id: 'bounty_1', title: 'find it', body: 'b', reward_sol: 0.1, mint: null });
    await announce();

    await receiver.waitFor(() => receiver.on('/all').length >= 3 && receiver.on('/bounty').length >= 1);
    const received = receiver.on('/all');
    expect(received.map((r) => r.json.seq).sort((a, b) => a - b)).toEqual([postSeq, actionSeq, bountySeq]);
    expect(received.map((r) => r.json.seq)).not.toContain(citizen);
    expect(received.map((r) => r.json.seq)).not.toContain(before);
    for (const request of received) {
      expect(request.headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(request.headers['x-svc-signature']).toBe(timestampedSignature(request, SECRETS[0]!));
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-svc-seq']).toBe(String(request.json.seq));
      expect(request.headers['x-svc-delivery']).toMatch(/^dlv_[0-9A-Z]{26}$/);
      expect(Object.keys(request.json).sort()).toEqual(['at', 'data', 'delivery_id', 'kind', 'seq']);
      expect(request.json.delivery_id).toBe(request.headers['x-svc-delivery']);
      expect(request.json.data).toMatchObject({ actor: AGENT, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    }
    const postDelivery = received.find((r) => r.json.seq === postSeq)!;
    expect(postDelivery.json).toMatchObject({ kind: 'post', data: { type: 'PostCreated', post_id: 'post_1', body: 'post 1' } });
    const [bounty] = receiver.on('/bounty');
    expect(bounty!.json).toMatchObject({ kind: 'bounty', seq: bountySeq, data: { type: 'BountyPosted', bounty_id: 'bounty_1' } });
    expect(bounty!.headers['x-svc-signature']).toBeUndefined();
    expect(await store.fanoutPosition()).toBe(bountySeq);
    await attempts.waitFor(() => delivered(all.id).length === 3);
    expect((await deliveryRows(all.id)).map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('two workers on one database deliver every event exactly once', async () => {
    const doorbell = await register('/shared', { secret: SECRETS[1] });
    await worker({ concurrency: 3 });
    await worker({ concurrency: 3 });
    const seqs: number[] = [];
    for (let i = 0; i < 40; i++) seqs.push(await post(100 + i));
    await announce();
    await attempts.waitFor(() => delivered(doorbell.id).length >= 40);
    const rows = await deliveryRows(doorbell.id);
    expect(rows.map((r) => [r.status, Number(r.attempts)])).toEqual(Array(40).fill(['delivered', 1]));
    expect(receiver.on('/shared').map((r) => r.json.seq).sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(receiver.on('/shared').map((r) => r.headers['x-svc-delivery'])).size).toBe(40);
  });

  it('a delivery claimed by a worker that died is taken over when its lease ends', async () => {
    const doorbell = await register('/orphan');
    const orphanSeq = await post(200);
    await store.fanOut(100);
    const [claimed] = await store.claimDue(10, 300);
    expect(claimed).toMatchObject({ seq: orphanSeq, attempt: 1 });
    // Nothing records that claim: its worker is gone. Another one finds the row when the lease is over.
    await worker({ leaseMs: 300, timeoutMs: 100, pollMs: 100 });
    await attempts.waitFor(() => delivered(doorbell.id).length === 1);
    expect(receiver.on('/orphan')).toHaveLength(1);
    const [row] = await deliveryRows(doorbell.id);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('a stopping worker waits a bounded time, then gives its claimed deliveries back untried', async () => {
    const doorbell = await register('/slow');
    receiver.hold('/slow');
    const slowSeq = await post(300);
    const first = await worker({ stopGraceMs: 150 });
    first.wake();
    await receiver.waitFor(() => receiver.on('/slow').length === 1);
    await first.stop();
    const [released] = await deliveryRows(doorbell.id);
    expect(released).toMatchObject({ status: 'pending', attempts: 0, tries: 0, claim_id: null });
    expect(new Date(released!.due_at).getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    receiver.release('/slow');
    await worker();
    await attempts.waitFor(() => delivered(doorbell.id).length === 1);
    expect(receiver.on('/slow')).toHaveLength(2);
    const [row] = await deliveryRows(doorbell.id);
    expect(row).toMatchObject({ seq: slowSeq, status: 'delivered', attempts: 1 });
    expect(receiver.on('/slow').map((r) => r.headers['x-svc-delivery'])).toEqual([row!.id, row!.id]);
  });

  it('refuses to connect to loopback when the switch is off, and to whatever a name resolves to that is not public; the owner never sees the address', async () => {
    const cases: Array<{ path: string; host?: string; lookup?: LookupFunction; allowLoopback: boolean; detail: RegExp; hidden: string }> = [
      { path: '/literal', allowLoopback: false, detail: /127\.0\.0\.1.*not allowed/, hidden: '127.0.0.1' },
      { path: '/rebind-loopback', host: RECEIVER_NAME, lookup: resolvingTo('127.0.0.1'), allowLoopback: false, detail: /resolves to a refused address: 127\.0\.0\.1 is a loopback/, hidden: '127.0.0.1' },
      { path: '/rebind-private', host: RECEIVER_NAME, lookup: resolvingTo('10.20.30.40'), allowLoopback: true, detail: /resolves to a refused address: 10\.20\.30\.40 is a private/, hidden: '10.20.30.40' },
      { path: '/rebind-metadata', host: RECEIVER_NAME, lookup: resolvingTo('169.254.169.254'), allowLoopback: true, detail: /169\.254\.169\.254 is a link-local/, hidden: '169.254.169.254' },
    ];
    for (const c of cases) {
      const doorbell = await register(c.path, { url: receiver.url(c.path, c.host) });
      await post(400);
      const running = await worker({ allowLoopback: c.allowLoopback, lookup: c.lookup, backoffBaseMs: 60_000 });
      running.wake();
      await attempts.waitFor(() => attempts.of(doorbell.id).length >= 1);
      expect(attempts.of(doorbell.id)[0]).toMatchObject({ ok: false, httpStatus: null, error: REFUSED_ADDRESS_ERROR });
      const [row] = await deliveryRows(doorbell.id);
      expect(row).toMatchObject({ last_error: REFUSED_ADDRESS_ERROR, last_http_status: null });
      // What the owner reads (log included) names no address; the server's own log keeps the detail.
      const page = await store.deliveries(AGENT, { doorbellId: doorbell.id, limit: 10 });
      expect(page.items[0]!.log.map((a) => a.error)).toEqual([REFUSED_ADDRESS_ERROR]);
      expect(JSON.stringify(page)).not.toContain(c.hidden);
      expect(logLines.filter((line) => line.includes(row!.id)).join('\n')).toMatch(c.detail);
      await running.stop();
      await store.remove(AGENT, { id: doorbell.id });
    }
    expect(receiver.requests).toEqual([]);

    // The same name resolving to loopback with the switch on reaches the receiver: the address decides.
    await register('/rebind-ok', { url: receiver.url('/rebind-ok', RECEIVER_NAME) });
    await post(401);
    (await worker({ lookup: resolvingTo('127.0.0.1') })).wake();
    await receiver.waitFor(() => receiver.on('/rebind-ok').length === 1);
  });

  it('retries a failing receiver with growing delays, mutes the doorbell at 10 consecutive failures, then stops ringing it', async () => {
    receiver.answer('/down', 500);
    const doorbell = await register('/down');
    const failingSeq = await post(500);
    const backoff = { backoffBaseMs: 20, backoffMaxMs: 200, random: () => 1 };
    (await worker(backoff)).wake();
    await attempts.waitFor(() => attempts.of(doorbell.id).some((a) => a.muted));
    const muted = await store.get(doorbell.id);
    expect(muted).toMatchObject({ muted: true, failures: MUTE_AFTER_FAILURES });
    const arrivals = receiver.on('/down').map((r) => r.at);
    for (let n = 1; n < arrivals.length; n++) {
      const expectedDelay = Math.min(200, 20 * 2 ** (n - 1));
      expect(arrivals[n]! - arrivals[n - 1]!).toBeGreaterThanOrEqual(expectedDelay - 2);
    }
    const page = await store.deliveries(AGENT, { doorbellId: doorbell.id, limit: 10 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ seq: failingSeq, status: 'failed', attempts: 10, last_http_status: 500, last_error: 'HTTP 500' });
    expect(page.items[0]!.log.map((a) => [a.n, a.ok, a.http_status])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, false, 500]));

    // Muted: a later post is passed over by the fan-out and never reaches the receiver. The fan-out is
    // run here, with the worker stopped, so the test knows when it has passed the post.
    await stopWorkers();
    const later = await post(501);
    expect(await store.fanOut(100)).toMatchObject({ locked: false, queued: 0 });
    expect(await store.fanoutPosition()).toBeGreaterThanOrEqual(later);
    expect((await deliveryRows(doorbell.id)).map((r) => Number(r.seq))).toEqual([failingSeq]);
    expect(receiver.on('/down')).toHaveLength(MUTE_AFTER_FAILURES);
  });

  it('keeps every secret out of the log lines and out of the stored rows', async () => {
    receiver.answer('/secret-refused', 401);
    await register('/secret-ok', { secret: SECRETS[0] });
    await register('/secret-refused', { secret: SECRETS[1] });
    await post(600);
    (await worker({ backoffBaseMs: 60_000 })).wake();
    await attempts.waitFor((all) => all.length >= 2);
    expect(receiver.on('/secret-ok')).toHaveLength(1);
    expect(receiver.on('/secret-refused')).toHaveLength(1);
    const stored = await sql<{ t: string }>`
      select string_agg(t, ' ') as t from (
        select row_to_json(d)::text as t from vault.doorbells d
        union all select row_to_json(x)::text from vault.doorbell_deliveries x
        union all select row_to_json(a)::text from vault.doorbell_attempts a) all_rows`.execute(database.db);
    const text = stored.rows[0]!.t;
    expect(text).toContain('HTTP 401');
    expect(logLines.join('\n')).toContain('doorbell attempt');
    for (const secret of SECRETS) {
      expect(logLines.join('\n')).not.toContain(secret);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString('base64'));
      expect(text).not.toContain(Buffer.from(secret).toString('hex'));
    }
  });

  it('claims at most one delivery per doorbell at a time, also when two workers claim at once', async () => {
    const first = await register('/queue1', { kinds: ['post'] });
    const second = await register('/queue2', { kinds: ['post'] });
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push(await post(700 + i));
    await store.fanOut(100);
    const [a, b] = await Promise.all([store.claimDue(10, 60_000), store.claimDue(10, 60_000)]);
    const claimed = [...a!, ...b!];
    expect(claimed.map((c) => [c.doorbellId, c.seq]).sort()).toEqual([
      [first.id, seqs[0]],
      [second.id, seqs[0]],
    ].sort());
    // Both doorbells have a send in flight: nothing more is claimable until one is recorded or released.
    expect(await store.claimDue(10, 60_000)).toEqual([]);
    await store.release(claimed.find((c) => c.doorbellId === first.id)!);
    expect((await store.claimDue(10, 60_000)).map((c) => [c.doorbellId, c.seq])).toEqual([[first.id, seqs[0]]]);
  });

  it('a slow receiver with a backlog holds one send, and another citizen’s delivery goes out meanwhile', async () => {
    receiver.hold('/slow-backlog');
    const slow = await register('/slow-backlog', { kinds: ['post'] });
    for (let i = 0; i < 20; i++) await post(800 + i);
    // Two slots: before the fix the backlog filled both and the other citizen waited for the slow receiver.
    await worker({ concurrency: 2 });
    await announce();
    await receiver.waitFor(() => receiver.on('/slow-backlog').length === 1);
    const victim = await register('/victim', { kinds: ['post'], agentId: OTHER_AGENT });
    const victimSeq = await post(820);
    await announce();
    await receiver.waitFor(() => receiver.on('/victim').length === 1, 10_000);
    expect(receiver.on('/victim')[0]!.json.seq).toBe(victimSeq);
    await attempts.waitFor(() => delivered(victim.id).length === 1);
    expect(receiver.on('/slow-backlog')).toHaveLength(1);
    await store.remove(AGENT, { id: slow.id });
    receiver.release('/slow-backlog');
  });

  it('rides out a brief outage during a burst: failures are counted per doorbell, one attempt at a time, and it is not muted', async () => {
    // 500 for 800 ms from the first attempt; the doorbell pauses 100, 200, 400, 400 ms after failures in a row.
    receiver.outage('/burst', 500, 800);
    const doorbell = await register('/burst', { kinds: ['post'] });
    await worker({ backoffBaseMs: 100, backoffMaxMs: 400, random: () => 1 });
    for (let i = 0; i < 12; i++) await post(900 + i);
    await announce();
    await attempts.waitFor(() => delivered(doorbell.id).length === 12, 15_000);
    const failed = attempts.of(doorbell.id).filter((a) => !a.ok);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    expect(failed.length).toBeLessThanOrEqual(4);
    expect(failed.map((a) => a.failures)).toEqual(failed.map((_, i) => i + 1));
    expect(await store.get(doorbell.id)).toMatchObject({ muted: false, failures: 0 });
    expect((await deliveryRows(doorbell.id)).map((r) => r.status)).toEqual(Array(12).fill('delivered'));
  });

  it('mutes after 10 failures in a row of a sustained outage, spread by the doorbell’s backoff; re-registering unmutes and the next event is delivered without a replay', async () => {
    receiver.answer('/outage', 500);
    const doorbell = await register('/outage', { kinds: ['post'] });
    const baseMs = 5;
    await worker({ backoffBaseMs: baseMs, backoffMaxMs: 60_000, random: () => 1 });
    for (let i = 0; i < 12; i++) await post(1000 + i);
    await announce();
    await attempts.waitFor(() => attempts.of(doorbell.id).some((a) => a.muted));
    expect(attempts.of(doorbell.id).map((a) => a.failures)).toEqual(Array.from({ length: MUTE_AFTER_FAILURES }, (_, i) => i + 1));
    expect(await store.get(doorbell.id)).toMatchObject({ muted: true, failures: MUTE_AFTER_FAILURES });
    const arrivals = receiver.on('/outage').map((r) => r.at);
    expect(arrivals).toHaveLength(MUTE_AFTER_FAILURES);
    // After its n-th failure in a row nothing goes to the doorbell for base * 2^(n-1) ms (jitter pinned to the top).
    for (let n = 1; n < arrivals.length; n++) expect(arrivals[n]! - arrivals[n - 1]!).toBeGreaterThanOrEqual(baseMs * 2 ** (n - 1) - 2);
    const rows = await deliveryRows(doorbell.id);
    expect(rows.filter((r) => r.status !== 'skipped' && r.status !== 'failed')).toEqual([]);
    expect(rows.reduce((sum, r) => sum + Number(r.attempts), 0)).toBe(MUTE_AFTER_FAILURES);

    // The receiver is back. Without the reset, the pause after the 10th failure (2.56 s) would hold this.
    receiver.answer('/outage', 204);
    expect(await register('/outage', { kinds: ['post'] })).toMatchObject({ id: doorbell.id, muted: false, failures: 0 });
    const fresh = await post(1100);
    await announce();
    await receiver.waitFor(() => receiver.on('/outage').some((r) => r.json.seq === fresh), 1_000);
    await attempts.waitFor(() => delivered(doorbell.id).length === 1);
    expect(await store.get(doorbell.id)).toMatchObject({ muted: false, failures: 0 });
  });

  it('bounds a replay by the deliveries its doorbell has pending', async () => {
    const doorbell = await register('/replayed', { kinds: ['post'] });
    const before = rig.seq;
    const seqs: number[] = [];
    for (let i = 0; i < 8; i++) seqs.push(await post(1200 + i));
    // No worker runs: what is queued stays pending.
    expect(await store.replayAfter(AGENT, doorbell.id, before, 5)).toEqual({ ok: true, requeued: 5, nextAfterSeq: seqs[4] });
    expect(await store.replayAfter(AGENT, doorbell.id, seqs[4]!, 5)).toEqual({ ok: false, reason: 'busy', pending: 5, cap: 5 });
    const [claimed] = await store.claimDue(10, 60_000);
    await store.recordAttempt(claimed!, { ok: true, httpStatus: 204, error: null, startedAt: Date.now(), durationMs: 1 }, () => 0);
    expect(await store.replayAfter(AGENT, doorbell.id, seqs[4]!, 5)).toEqual({ ok: true, requeued: 1, nextAfterSeq: seqs[5] });
    expect(await store.replayDelivery(AGENT, claimed!.id, 5)).toEqual({ ok: false, reason: 'busy', pending: 5, cap: 5 });
    expect((await deliveryRows(doorbell.id)).filter((r) => r.status === 'pending')).toHaveLength(5);
  });

  it('fans out in SQL past more doorbells than a JavaScript argument list can hold', async () => {
    const many = 150_000;
    await sql`
      insert into vault.doorbells (id, agent_id, url_sealed, url_hash, kinds, after_seq, created_at, updated_at)
      select 'door_MANY' || lpad(n::text, 17, '0'), 'agent_many_' || n, 'never unsealed', 'hash_' || n, 'action', ${rig.seq}, 0, 0
        from generate_series(1, ${many}) as n`.execute(database.db);
    const ringing = await register('/many', { kinds: ['post'] });
    await stopWorkers();
    await store.fanOut(1000);
    const postSeq = await post(1300);
    const bountySeq = await append('BountyPosted', { bounty_id: 'bounty_many', title: 'many', body: 'b', reward_sol: 0.1, mint: null });
    let queued = 0;
    for (let pass = 0; pass < 10 && (await store.fanoutPosition()) < bountySeq; pass++) queued += (await store.fanOut(1000)).queued;
    expect(await store.fanoutPosition()).toBe(bountySeq);
    expect(queued).toBe(1);
    const rows = await deliveryRows(ringing.id);
    expect(rows.map((r) => [Number(r.seq), r.status])).toEqual([[postSeq, 'pending']]);
    expect(rows[0]!.id).toMatch(/^dlv_[0-9A-Z]{26}$/);
  }, 60_000);
});
