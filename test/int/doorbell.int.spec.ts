import { createHmac, randomBytes } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import { kindOf } from '@svc/domain';
import { projections, readModelMigrations } from '@svc/projections';
import { migrate, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { DoorbellStore, MUTE_AFTER_FAILURES } from '@svc/vault';
import { startDoorbellWorker, type DoorbellWorkerTuning, type RunningDoorbellWorker } from '@svc/app-workers';
import { DoorbellReceiver, RECEIVER_NAME } from '../support/doorbellReceiver';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const AGENT = 'agent_01JDOORBELLINTEGRATION0000';
const SECRETS = ['int-secret-alpha-7f3a', 'int-secret-beta-91c2'];

/** Polls a condition (a database row, a position) until it holds; fails naming what was awaited. */
async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const resolvingTo =
  (address: string): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  };

jest.setTimeout(30_000);

describe('doorbell delivery against PostgreSQL and a real HTTPS receiver', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: DoorbellStore;
  let receiver: DoorbellReceiver;
  let bus: InProcessBus;
  const logLines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  const workers: RunningDoorbellWorker[] = [];
  let seq = -1;
  let unannounced: Array<{ seq: number; type: string }> = [];

  async function append(type: string, data: Record<string, unknown>): Promise<number> {
    seq += 1;
    const at = Date.now();
    const hash = randomBytes(32).toString('hex');
    const entry = { seq, type, at, actor: AGENT, data, prev: '0'.repeat(64), hash };
    await database.db.insertInto('rm.entries').values({ seq, type, kind: kindOf(type), at, actor: AGENT, hash, body: JSON.stringify(entry) }).execute();
    unannounced.push(entry);
    return seq;
  }

  /** What the projector announces after a batch, so workers wake as they do in the service. */
  async function announce(): Promise<void> {
    const entries = unannounced;
    unannounced = [];
    await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq, from: entries[0]?.seq ?? seq, entries });
  }

  const post = (n: number) => append('PostCreated', { post_id: `post_${n}`, body: `post ${n}`, mint: null, parent_id: null, root_id: null, parent_author_id: null, tags: [] });

  async function worker(tuning: DoorbellWorkerTuning & { allowLoopback?: boolean } = {}): Promise<RunningDoorbellWorker> {
    const running = await startDoorbellWorker({ store, bus, log, allowLoopback: true, caFile: receiver.caFile, pollMs: 60_000, ...tuning });
    workers.push(running);
    return running;
  }

  async function register(path: string, options: { kinds?: string[]; secret?: string; url?: string } = {}) {
    const outcome = await store.register({ agentId: AGENT, url: options.url ?? receiver.url(path), kinds: options.kinds ?? ['post', 'action', 'bounty'], secret: options.secret, ledgerHead: seq, limit: 3 });
    if (!outcome.ok) throw new Error('setup: registration refused');
    return outcome.doorbell;
  }

  const deliveryRows = (doorbellId: string) =>
    database.db.selectFrom('vault.doorbell_deliveries').selectAll().where('doorbell_id', '=', doorbellId).orderBy('seq').execute();

  beforeAll(async () => {
    db = await freshDatabase('doorbell_int');
    database = await openDatabase({ url: db.url, dataDir: tempDir('doorbell-int') });
    await migrate(database.db, 'rm', readModelMigrations(projections));
    store = await new DoorbellStore(database, randomBytes(32), 'rm').init();
    receiver = await DoorbellReceiver.start();
    bus = new InProcessBus();
  }, 30_000);

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
    await database.db.deleteFrom('vault.doorbells').execute();
    receiver.requests.splice(0);
  });

  afterAll(async () => {
    await receiver?.close();
    await bus?.close();
    await database?.close();
    await db?.drop();
  });

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
      const expected = `sha256=${createHmac('sha256', SECRETS[0]!).update(request.raw).digest('hex')}`;
      expect(request.headers['x-svc-signature']).toBe(expected);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-svc-seq']).toBe(String(request.json.seq));
      expect(request.headers['x-svc-delivery']).toMatch(/^dlv_[0-9A-Z]{26}$/);
      expect(Object.keys(request.json).sort()).toEqual(['at', 'data', 'kind', 'seq']);
      expect(request.json.data).toMatchObject({ actor: AGENT, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    }
    const postDelivery = received.find((r) => r.json.seq === postSeq)!;
    expect(postDelivery.json).toMatchObject({ kind: 'post', data: { type: 'PostCreated', post_id: 'post_1', body: 'post 1' } });
    const [bounty] = receiver.on('/bounty');
    expect(bounty!.json).toMatchObject({ kind: 'bounty', seq: bountySeq, data: { type: 'BountyPosted', bounty_id: 'bounty_1' } });
    expect(bounty!.headers['x-svc-signature']).toBeUndefined();
    expect(await store.fanoutPosition()).toBe(bountySeq);
    await until('deliveries recorded', async () => (await deliveryRows(all.id)).every((d) => d.status === 'delivered') || undefined);
  });

  it('two workers on one database deliver every event exactly once', async () => {
    const doorbell = await register('/shared', { secret: SECRETS[1] });
    await worker({ concurrency: 3 });
    await worker({ concurrency: 3 });
    const seqs: number[] = [];
    for (let i = 0; i < 40; i++) seqs.push(await post(100 + i));
    await announce();
    await receiver.waitFor(() => receiver.on('/shared').length >= 40);
    const rows = await until('all 40 recorded', async () => {
      const r = await deliveryRows(doorbell.id);
      return r.length === 40 && r.every((d) => d.status === 'delivered') ? r : undefined;
    });
    expect(rows.map((r) => Number(r.attempts))).toEqual(Array(40).fill(1));
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
    await receiver.waitFor(() => receiver.on('/orphan').length === 1);
    const [row] = await until('the takeover recorded', async () => {
      const r = await deliveryRows(doorbell.id);
      return r[0]?.status === 'delivered' ? r : undefined;
    });
    expect(Number(row!.attempts)).toBe(2);
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
    await receiver.waitFor(() => receiver.on('/slow').length === 2);
    const [row] = await until('redelivered', async () => {
      const r = await deliveryRows(doorbell.id);
      return r[0]?.status === 'delivered' ? r : undefined;
    });
    expect(row).toMatchObject({ seq: slowSeq, attempts: 1 });
    expect(receiver.on('/slow').map((r) => r.headers['x-svc-delivery'])).toEqual([row!.id, row!.id]);
  });

  it('refuses to connect to loopback when the switch is off, and to whatever a name resolves to that is not public', async () => {
    const cases: Array<{ path: string; host?: string; lookup?: LookupFunction; allowLoopback: boolean; error: RegExp }> = [
      { path: '/literal', allowLoopback: false, error: /127\.0\.0\.1.*not allowed/ },
      { path: '/rebind-loopback', host: RECEIVER_NAME, lookup: resolvingTo('127.0.0.1'), allowLoopback: false, error: /resolves to a refused address: 127\.0\.0\.1 is a loopback/ },
      { path: '/rebind-private', host: RECEIVER_NAME, lookup: resolvingTo('10.20.30.40'), allowLoopback: true, error: /10\.20\.30\.40 is a private/ },
      { path: '/rebind-metadata', host: RECEIVER_NAME, lookup: resolvingTo('169.254.169.254'), allowLoopback: true, error: /169\.254\.169\.254 is a link-local/ },
    ];
    for (const c of cases) {
      const doorbell = await register(c.path, { url: receiver.url(c.path, c.host) });
      await post(400);
      const running = await worker({ allowLoopback: c.allowLoopback, lookup: c.lookup, backoffBaseMs: 60_000 });
      running.wake();
      const [row] = await until(`the refusal of ${c.path}`, async () => {
        const r = await deliveryRows(doorbell.id);
        return r[0]?.last_error ? r : undefined;
      });
      expect(row!.last_error).toMatch(c.error);
      expect(row!.last_http_status).toBeNull();
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
    await receiver.waitFor(() => receiver.on('/down').length >= MUTE_AFTER_FAILURES);
    const muted = await until('the doorbell muted', async () => {
      const d = await store.get(doorbell.id);
      return d?.muted ? d : undefined;
    });
    expect(muted.failures).toBe(MUTE_AFTER_FAILURES);
    const arrivals = receiver.on('/down').map((r) => r.at);
    for (let n = 1; n < arrivals.length; n++) {
      const expectedDelay = Math.min(200, 20 * 2 ** (n - 1));
      expect(arrivals[n]! - arrivals[n - 1]!).toBeGreaterThanOrEqual(expectedDelay - 2);
    }
    const page = await store.deliveries(AGENT, { doorbellId: doorbell.id, limit: 10 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ seq: failingSeq, status: 'failed', attempts: 10, last_http_status: 500, last_error: 'HTTP 500' });
    expect(page.items[0]!.log.map((a) => [a.n, a.ok, a.http_status])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, false, 500]));

    // Muted: a later post is passed over by the fan-out and never reaches the receiver.
    const later = await post(501);
    await announce();
    await until('the fan-out past the later post', async () => (await store.fanoutPosition()) >= later || undefined);
    expect((await deliveryRows(doorbell.id)).map((r) => Number(r.seq))).toEqual([failingSeq]);
    expect(receiver.on('/down')).toHaveLength(MUTE_AFTER_FAILURES);
  });

  it('holds the cap of 3 under concurrent registrations, and re-registering a URL neither counts nor keeps it muted', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.register({ agentId: AGENT, url: receiver.url(`/cap${i}`), kinds: ['post'], ledgerHead: seq, limit: 3 })),
    );
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    const mine = await store.list(AGENT);
    expect(mine).toHaveLength(3);
    await database.db.updateTable('vault.doorbells').set({ muted: true, failures: 10 }).where('id', '=', mine[0]!.id).execute();
    const again = await store.register({ agentId: AGENT, url: mine[0]!.url, kinds: ['bounty'], secret: 'new', ledgerHead: seq, limit: 3 });
    expect(again).toMatchObject({ ok: true, created: false, doorbell: { id: mine[0]!.id, muted: false, failures: 0, kinds: ['bounty'], hasSecret: true } });
    expect(await store.list(AGENT)).toHaveLength(3);
  });

  it('keeps every secret out of the log lines and out of the stored rows', async () => {
    receiver.answer('/secret-refused', 401);
    await register('/secret-ok', { secret: SECRETS[0] });
    await register('/secret-refused', { secret: SECRETS[1] });
    await post(600);
    (await worker({ backoffBaseMs: 60_000 })).wake();
    await receiver.waitFor(() => receiver.on('/secret-ok').length === 1 && receiver.on('/secret-refused').length === 1);
    await until('both attempts recorded', async () => {
      const attempts = await database.db.selectFrom('vault.doorbell_attempts').select('ok').execute();
      return attempts.length >= 2 || undefined;
    });
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
});
