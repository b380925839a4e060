import { createHmac, randomBytes } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { InProcessBus, PROJECTED_CHANNEL } from '@svc/bus';
import { kindOf } from '@svc/domain';
import { entries, projections, readModelMigrations } from '@svc/projections';
import { migrate, openDatabase, type SqlDatabase } from '@svc/readmodel';
import { DoorbellStore, MUTE_AFTER_FAILURES, doorbellMigrations } from '@svc/vault';
import { REFUSED_ADDRESS_ERROR, startDoorbellWorker, type DoorbellWorkerTuning, type RunningDoorbellWorker } from '@svc/app-workers';
import { DoorbellReceiver, RECEIVER_NAME, RecordedAttempts } from '../support/doorbellReceiver';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const AGENT = 'agent_01JDOORBELLINTEGRATION0000';
const OTHER_AGENT = 'agent_01JDOORBELLOTHERCITIZEN0';
const SECRETS = ['int-secret-alpha-7f3a', 'int-secret-beta-91c2'];
const MASTER_KEY = randomBytes(32);

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
  /** Every attempt the workers record, as they record it: what the tests wait on. */
  const attempts = new RecordedAttempts();
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

  async function worker(tuning: DoorbellWorkerTuning & { allowLoopback?: boolean; store?: DoorbellStore } = {}): Promise<RunningDoorbellWorker> {
    const running = await startDoorbellWorker({ store, bus, log, allowLoopback: true, caFile: receiver.caFile, pollMs: 60_000, onAttemptRecorded: attempts.record, ...tuning });
    workers.push(running);
    return running;
  }

  async function register(path: string, options: { kinds?: string[]; secret?: string; url?: string; agentId?: string } = {}) {
    const outcome = await store.register({ agentId: options.agentId ?? AGENT, url: options.url ?? receiver.url(path), kinds: options.kinds ?? ['post', 'action', 'bounty'], secret: options.secret, ledgerHead: seq, limit: 3 });
    if (!outcome.ok) throw new Error('setup: registration refused');
    return outcome.doorbell;
  }

  const stopWorkers = () => Promise.all(workers.splice(0).map((w) => w.stop()));
  const delivered = (doorbellId: string) => attempts.of(doorbellId).filter((a) => a.status === 'delivered');

  /** Every column of every table in the database (schema.table.column) with a value that contains one of `needles`. */
  async function columnsHolding(needles: string[]): Promise<string[]> {
    const tables = await sql<{ table_schema: string; table_name: string }>`
      select table_schema, table_name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`.execute(database.db);
    expect(tables.rows.filter((t) => t.table_schema === 'vault').map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['doorbells', 'doorbell_deliveries', 'doorbell_attempts', 'doorbell_fanout']),
    );
    const found = new Set<string>();
    for (const { table_schema, table_name } of tables.rows) {
      const rows = await sql<{ row: Record<string, unknown> }>`select row_to_json(r) as row from ${sql.table(`${table_schema}.${table_name}`)} r`.execute(database.db);
      for (const { row } of rows.rows) {
        for (const [column, value] of Object.entries(row)) {
          const text = typeof value === 'string' ? value : JSON.stringify(value);
          if (needles.some((needle) => text.includes(needle))) found.add(`${table_schema}.${table_name}.${column}`);
        }
      }
    }
    return [...found].sort();
  }

  const deliveryRows = (doorbellId: string) =>
    database.db.selectFrom('vault.doorbell_deliveries').selectAll().where('doorbell_id', '=', doorbellId).orderBy('seq').execute();

  beforeAll(async () => {
    db = await freshDatabase('doorbell_int');
    database = await openDatabase({ url: db.url, dataDir: tempDir('doorbell-int') });
    await migrate(database.db, 'rm', readModelMigrations(projections));
    store = await new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm')).init();
    receiver = await DoorbellReceiver.start();
    bus = new InProcessBus();
  }, 30_000);

  afterEach(async () => {
    await stopWorkers();
    await database.db.deleteFrom('vault.doorbells').execute();
    receiver.clear();
    attempts.clear();
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
    const before = seq;
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

  it('seals a URL that carries a token: no table holds the token, yet its owner lists it, it is rung, the same URL again is the same doorbell (unmuted), and removal by URL finds it', async () => {
    const token = `SECRET${randomBytes(12).toString('hex')}`;
    const path = `/tokened?token=${token}`;
    const url = receiver.url(path);
    const doorbell = await register(path, { kinds: ['post'], secret: SECRETS[0] });
    expect(doorbell.url).toBe(url);
    const postSeq = await post(1400);
    await worker();
    await announce();
    await receiver.waitFor(() => receiver.on(path).length === 1);
    expect(receiver.on(path)[0]!.json.seq).toBe(postSeq);
    await attempts.waitFor(() => delivered(doorbell.id).length === 1);

    expect(await columnsHolding([token, Buffer.from(token).toString('base64'), Buffer.from(token).toString('hex')])).toEqual([]);
    expect(logLines.join('\n')).not.toContain(token);
    expect((await store.list(AGENT)).map((d) => d.url)).toEqual([url]);
    expect(await store.list(OTHER_AGENT)).toEqual([]);

    await database.db.updateTable('vault.doorbells').set({ muted: true, failures: MUTE_AFTER_FAILURES }).where('id', '=', doorbell.id).execute();
    const again = await store.register({ agentId: AGENT, url, kinds: ['post'], ledgerHead: seq, limit: 3 });
    expect(again).toMatchObject({ ok: true, created: false, doorbell: { id: doorbell.id, url, muted: false, failures: 0 } });
    expect(await store.list(AGENT)).toHaveLength(1);
    // The same URL registered by another citizen is a doorbell of theirs, which removing ours leaves alone.
    const theirs = await store.register({ agentId: OTHER_AGENT, url, kinds: ['post'], ledgerHead: seq, limit: 3 });
    expect(theirs).toMatchObject({ ok: true, created: true });
    expect(await store.remove(AGENT, { url })).toEqual({ id: doorbell.id, url });
    expect(await store.list(AGENT)).toEqual([]);
    expect(await store.remove(AGENT, { url })).toBeUndefined();
    expect((await store.list(OTHER_AGENT)).map((d) => d.url)).toEqual([url]);
  });

  it('seals at init, batch by batch, the plaintext URLs a release before stored, then drops their column; starts at once share the work', async () => {
    const legacy = 'vault_legacy';
    // The schema as the release before sealed URLs left it: its migrations, which never change once shipped.
    await migrate(database.db, legacy, doorbellMigrations.slice(0, 2));
    const token = `SECRET${randomBytes(12).toString('hex')}`;
    const path = `/legacy?token=${token}`;
    const url = receiver.url(path);
    const otherUrl = (n: number) => `https://example.com/${n}?token=${token}`;
    try {
      await sql`
        insert into ${sql.table(`${legacy}.doorbells`)} (id, agent_id, url, kinds, after_seq, created_at, updated_at)
        values ('door_LEGACY', ${AGENT}, ${url}, 'post', ${seq}, 0, 0)`.execute(database.db);
      // More than one batch.
      await sql`
        insert into ${sql.table(`${legacy}.doorbells`)} (id, agent_id, url, kinds, after_seq, created_at, updated_at)
        select 'door_OLD' || lpad(n::text, 18, '0'), 'agent_old_' || n, 'https://example.com/' || n || '?token=' || ${token}, 'action', ${seq}, 0, 0
          from generate_series(1, 1200) as n`.execute(database.db);
      expect(await columnsHolding([token])).toEqual([`${legacy}.doorbells.url`]);

      const [first, second] = await Promise.all([1, 2].map(() => new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm'), legacy).init()));
      expect(await columnsHolding([token])).toEqual([]);
      const columns = await sql<{ column_name: string; is_nullable: string }>`
        select column_name, is_nullable from information_schema.columns where table_schema = ${legacy} and table_name = 'doorbells' and column_name like 'url%'
         order by column_name`.execute(database.db);
      expect(columns.rows).toEqual([
        { column_name: 'url_hash', is_nullable: 'NO' },
        { column_name: 'url_sealed', is_nullable: 'NO' },
      ]);

      expect((await first!.list(AGENT)).map((d) => [d.id, d.url])).toEqual([['door_LEGACY', url]]);
      expect((await second!.list('agent_old_7')).map((d) => d.url)).toEqual([otherUrl(7)]);
      expect(await second!.register({ agentId: AGENT, url, kinds: ['post'], ledgerHead: seq, limit: 3 })).toMatchObject({ ok: true, created: false, doorbell: { id: 'door_LEGACY', url } });
      expect(await first!.remove('agent_old_7', { url: otherUrl(7) })).toEqual({ id: 'door_OLD000000000000000007', url: otherUrl(7) });

      const postSeq = await post(1500);
      (await worker({ store: first })).wake();
      await receiver.waitFor(() => receiver.on(path).length === 1);
      expect(receiver.on(path)[0]!.json.seq).toBe(postSeq);

      // A later start finds nothing left to seal.
      await new DoorbellStore(database, MASTER_KEY, entries.inSchema('rm'), legacy).init();
      expect((await first!.list(AGENT)).map((d) => d.url)).toEqual([url]);
    } finally {
      await stopWorkers();
      await sql`drop schema if exists ${sql.id(legacy)} cascade`.execute(database.db);
    }
  });

  it('fans out in SQL past more doorbells than a JavaScript argument list can hold', async () => {
    const many = 150_000;
    await sql`
      insert into vault.doorbells (id, agent_id, url_sealed, url_hash, kinds, after_seq, created_at, updated_at)
      select 'door_MANY' || lpad(n::text, 17, '0'), 'agent_many_' || n, 'never unsealed', 'hash_' || n, 'action', ${seq}, 0, 0
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
