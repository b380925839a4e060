import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { sql } from 'kysely';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { DoorbellReceiver, RecordedAttempts } from '../support/doorbellReceiver';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call as rawCall, uniqueHandle, type Reply } from '../support/http';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

jest.setTimeout(60_000);

/** A public-looking name that the worker's resolver answers with a private address, as a rebinding DNS would. */
const PRIVATE_NAME = 'rebind.example.com';
const PRIVATE_ADDRESS = '10.20.30.40';
const rebindingLookup = ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
  if (hostname !== PRIVATE_NAME) return dns.lookup(hostname, options, callback);
  if (options.all) callback(null, [{ address: PRIVATE_ADDRESS, family: 4 }]);
  else callback(null, PRIVATE_ADDRESS, 4);
}) as LookupFunction;

describe('doorbells over HTTP, delivered to a real HTTPS receiver', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let receiver: DoorbellReceiver;
  let base: string;
  /** Every attempt the in-process worker records, as it records it: what the tests wait on. */
  const attempts = new RecordedAttempts();
  /** Every answer the service gave in this file: no secret may appear in any of them. */
  const answers: string[] = [];
  const secrets: string[] = [];

  async function call<T = any>(method: string, path: string, options: Parameters<typeof rawCall>[3] = {}): Promise<Reply<T>> {
    const reply = await rawCall<T>(base, method, path, options);
    answers.push(JSON.stringify(reply.body ?? null));
    return reply;
  }

  function newSecret(): string {
    const secret = `whsec_${randomBytes(18).toString('hex')}`;
    secrets.push(secret);
    return secret;
  }

  beforeAll(async () => {
    receiver = await DoorbellReceiver.start();
    db = await freshDatabase('doorbell');
    server = await startEmbedded(
      testConfig({
        DATABASE_URL: db.url,
        REDIS_URL,
        DATA_DIR: tempDir('doorbell'),
        SERVICE_MASTER_KEY: randomBytes(32).toString('base64'),
        DOORBELL_ALLOW_LOOPBACK: 'true',
        DOORBELL_CA_FILE: receiver.caFile,
      }),
      // Short retry delays, so the ten failures before a mute take a second instead of hours.
      { doorbellWorker: { backoffBaseMs: 25, backoffMaxMs: 200, lookup: rebindingLookup, onAttemptRecorded: attempts.record } },
    );
    base = server.url;
  }, 60_000);
  afterAll(async () => {
    // A test that failed while the receiver held a request must not leave the worker's stop waiting on it.
    receiver?.release('/flood');
    await server?.close();
    await receiver?.close();
    await db?.drop();
  });

  /** `verifyDoorbell` from the JavaScript block of /skill/realtime.md, as a receiver would paste it. */
  async function guideVerifier(): Promise<(raw: Buffer, header: string, secret: string, now?: number) => boolean> {
    const page = await fetch(`${base}/skill/realtime.md`).then((res) => res.text());
    const block = /```js\n([\s\S]*?)```/.exec(page)![1]!;
    const body = block.replace(/^import .*$/m, '').replace('export function', 'function');
    return new Function('createHmac', 'timingSafeEqual', `${body}\nreturn verifyDoorbell;`)(createHmac, timingSafeEqual);
  }

  async function citizen(prefix = 'bell'): Promise<Citizen> {
    const handle = uniqueHandle(prefix);
    const res = await call('POST', '/api/v1/register', { body: { handle, model: 'm' } });
    expect(res.status).toBe(201);
    return { id: res.body.agent.id, handle, key: res.body.api_key };
  }
  const ring = (who: Citizen, body: Record<string, unknown>) => call('POST', '/api/v1/doorbell', { key: who.key, body });
  const list = async (who: Citizen) => (await call('GET', '/api/v1/doorbell', { key: who.key })).body.doorbells as any[];
  const deliveries = async (who: Citizen, query = '') => (await call('GET', `/api/v1/doorbell/deliveries${query}`, { key: who.key })).body;
  async function post(who: Citizen, text = 'gm'): Promise<number> {
    const res = await call('POST', '/api/v1/posts', { key: who.key, body: { body: text } });
    expect(res.status).toBe(201);
    return res.body.post.seq;
  }
  /** The delivery log once the worker has recorded what `done` waits for (the hook fires after the commit). */
  async function logAfter(who: Citizen, query: string, done: () => boolean): Promise<any[]> {
    await attempts.waitFor(done);
    return (await deliveries(who, query)).deliveries as any[];
  }
  const deliveredTo = (doorbellId: string) => attempts.of(doorbellId).filter((a) => a.status === 'delivered');

  /** A citizen whose doorbell's receiver holds every request, with a replayed backlog (the first test makes it). */
  let flooded: { who: Citizen; doorbellId: string } | undefined;

  // First in the file: the hundred posts it needs ring no other test's doorbells.
  it('bounds a replay by what its doorbell has pending: 429 rate_limited with pending and cap', async () => {
    const authors = [await citizen('flooder'), await citizen('flooder'), await citizen('flooder')];
    for (const author of authors) {
      for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: 7 }, (_, i) => post(author, `flood ${round}.${i}`)));
    }
    const mallory = await citizen('mallory');
    receiver.hold('/flood');
    const flood = (await ring(mallory, { url: receiver.url('/flood'), kinds: ['post'] })).body.doorbell;
    flooded = { who: mallory, doorbellId: flood.id };
    const first = await call('POST', '/api/v1/doorbell/replay', { key: mallory.key, body: { id: flood.id, after_seq: -1 } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, requeued: 100, next_after_seq: expect.any(Number) });
    const more = await call('POST', '/api/v1/doorbell/replay', { key: mallory.key, body: { id: flood.id, after_seq: first.body.next_after_seq } });
    expect(more.status).toBe(429);
    expect(more.body).toEqual({ ok: false, error: { code: 'rate_limited', message: expect.stringMatching(/100 deliveries pending \(at most 100\)/), pending: 100, cap: 100 } });
    expect(Number(more.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a flooded doorbell whose receiver hangs holds one send, and another citizen’s post is delivered meanwhile', async () => {
    const { who: mallory, doorbellId } = flooded!;
    await receiver.waitFor(() => receiver.on('/flood').length >= 1);
    const victor = await citizen('victor');
    const victorBell = (await ring(victor, { url: receiver.url('/victor'), kinds: ['post'] })).body.doorbell;
    const seq = await post(victor, 'not held up');
    await receiver.waitFor(() => receiver.on('/victor').some((r) => r.json.seq === seq), 10_000);
    await attempts.waitFor(() => deliveredTo(victorBell.id).length === 1);
    expect(receiver.on('/flood')).toHaveLength(1);
    expect((await call('DELETE', `/api/v1/doorbell?id=${doorbellId}`, { key: mallory.key })).status).toBe(200);
    receiver.release('/flood');
  });

  it('tells the owner only that an address was refused, never what the name resolved to', async () => {
    const olga = await citizen('olga');
    const bell = (await ring(olga, { url: receiver.url('/rebind', PRIVATE_NAME), kinds: ['post'] })).body.doorbell;
    expect(bell.url).toBe(receiver.url('/rebind', PRIVATE_NAME));
    const seq = await post(olga, 'where does it go');
    const [logged] = await logAfter(olga, `?id=${bell.id}`, () => attempts.of(bell.id).length >= 1);
    expect(logged).toMatchObject({ seq, last_http_status: null, last_error: 'refused: the host resolves to a non-public address' });
    expect(logged.log[0]).toMatchObject({ ok: false, http_status: null, error: 'refused: the host resolves to a non-public address' });
    expect(JSON.stringify(await deliveries(olga))).not.toContain(PRIVATE_ADDRESS);
    expect(receiver.on('/rebind')).toEqual([]);
    expect((await call('DELETE', `/api/v1/doorbell?id=${bell.id}`, { key: olga.key })).status).toBe(200);
  });

  it('registers a doorbell (secret never shown) and delivers a new post to it, signed over the raw body', async () => {
    const alice = await citizen('alice');
    const secret = newSecret();
    const res = await ring(alice, { url: receiver.url('/alice'), secret });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ok: true,
      updated: false,
      doorbell: { id: expect.stringMatching(/^door_[0-9A-Z]{26}$/), url: receiver.url('/alice'), kinds: ['post', 'action', 'bounty', 'buyback'], has_secret: true, muted: false, failures: 0, created_at: expect.any(Number) },
    });
    expect(await list(alice)).toEqual([res.body.doorbell]);

    // Registering a citizen is a `ledger` entry: it rings nothing.
    const bob = await citizen('bob');
    const profile = await call('GET', `/api/v1/agents/${bob.handle}`);
    const seq = await post(alice, 'hello doorbell');
    await receiver.waitFor(() => receiver.on('/alice').length >= 1);
    const [delivery] = receiver.on('/alice');
    expect(receiver.on('/alice').map((r) => r.json.seq)).toEqual([seq]);
    expect(profile.status).toBe(200);
    // The receiver's check the guide prints, run as printed: right secret and fresh time, or nothing.
    const verify = await guideVerifier();
    const header = String(delivery!.headers['x-svc-signature']);
    const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(header)![1]);
    expect(Math.abs(t - delivery!.at)).toBeLessThan(60_000);
    expect(verify(delivery!.raw, header, secret, t)).toBe(true);
    expect(verify(delivery!.raw, header, 'another secret of 16 bytes', t)).toBe(false);
    expect(verify(Buffer.concat([delivery!.raw, Buffer.from(' ')]), header, secret, t)).toBe(false);
    expect(verify(delivery!.raw, header.replace(`t=${t}`, `t=${t + 1}`), secret, t)).toBe(false);
    expect(verify(delivery!.raw, header, secret, t + 5 * 60_000 + 1)).toBe(false);
    expect(verify(delivery!.raw, header.slice(0, -2), secret, t)).toBe(false);
    expect(delivery!.headers['x-svc-seq']).toBe(String(seq));
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.json).toEqual({
      delivery_id: delivery!.headers['x-svc-delivery'],
      kind: 'post',
      seq,
      at: expect.any(Number),
      data: expect.objectContaining({ type: 'PostCreated', actor: alice.id, hash: expect.stringMatching(/^[0-9a-f]{64}$/), post_id: expect.stringMatching(/^post_/), body: 'hello doorbell' }),
    });
    // The hash is the ledger's own: /changes serves the same entry.
    const changes = await call('GET', `/api/v1/changes?after=${seq - 1}`);
    expect(JSON.stringify(changes.body)).toContain(delivery!.json.data.hash);

    const [logged] = await logAfter(alice, '', () => deliveredTo(res.body.doorbell.id).length === 1);
    expect(logged).toMatchObject({ doorbell_id: res.body.doorbell.id, seq, kind: 'post', status: 'delivered', attempts: 1, last_http_status: 204, last_error: null, next_attempt_at: null });
    expect(logged.id).toBe(delivery!.headers['x-svc-delivery']);
    expect(logged.log).toEqual([{ n: 1, at: expect.any(Number), ok: true, http_status: 204, error: null, duration_ms: expect.any(Number) }]);

    // A delivery replayed arrives again, under the same delivery id.
    const replay = await call('POST', '/api/v1/doorbell/replay', { key: alice.key, body: { delivery_id: logged.id } });
    expect(replay.body).toEqual({ ok: true, requeued: 1, next_after_seq: null });
    await receiver.waitFor(() => receiver.on('/alice').length === 2);
    expect(receiver.on('/alice')[1]!.headers['x-svc-delivery']).toBe(logged.id);
    expect(receiver.on('/alice')[1]!.raw.equals(delivery!.raw)).toBe(true);
    expect((await call('POST', '/api/v1/doorbell/replay', { key: bob.key, body: { delivery_id: logged.id } })).status).toBe(404);
  });

  it('rings only for the kinds a doorbell asked for', async () => {
    const carol = await citizen('carol');
    const bountyBell = (await ring(carol, { url: receiver.url('/carol-bounty'), kinds: ['bounty'] })).body.doorbell;
    expect(bountyBell.kinds).toEqual(['bounty']);
    const postBell = (await ring(carol, { url: receiver.url('/carol-post'), kinds: ['post'] })).body.doorbell;
    expect(postBell.has_secret).toBe(false);
    const postSeq = await post(carol, 'a post');
    const bounty = await call('POST', '/api/v1/bounties', { key: carol.key, body: { title: 'find the bug', body: 'details', reward_sol: 0.01 } });
    expect(bounty.status).toBe(201);
    const bountySeq = bounty.body.bounty.seq;
    await receiver.waitFor(() => receiver.on('/carol-bounty').length >= 1 && receiver.on('/carol-post').length >= 1);
    // Both arrived, so the fan-out has passed both entries: nothing else is coming.
    const items = await logAfter(carol, '', () => deliveredTo(bountyBell.id).length === 1 && deliveredTo(postBell.id).length === 1);
    expect(items.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    expect(receiver.on('/carol-bounty').map((r) => [r.json.kind, r.json.seq, r.json.data.type])).toEqual([['bounty', bountySeq, 'BountyPosted']]);
    expect(receiver.on('/carol-post').map((r) => [r.json.kind, r.json.seq])).toEqual([['post', postSeq]]);
    expect(receiver.on('/carol-post')[0]!.headers['x-svc-signature']).toBeUndefined();
  });

  it('holds a citizen to 3 doorbells, also under concurrent registrations; the same URL again updates it', async () => {
    const dave = await citizen('dave');
    for (const n of [1, 2, 3]) expect((await ring(dave, { url: receiver.url(`/dave${n}`) })).status).toBe(201);
    const fourth = await ring(dave, { url: receiver.url('/dave4') });
    expect(fourth.status).toBe(400);
    expect(fourth.body.error).toMatchObject({ code: 'invalid_request', field: 'url', message: expect.stringMatching(/at most 3 doorbells/) });
    const again = await ring(dave, { url: receiver.url('/dave2'), kinds: ['action'], secret: newSecret() });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ updated: true, doorbell: { kinds: ['action'], has_secret: true } });
    expect((await list(dave)).map((d) => d.url)).toEqual([1, 2, 3].map((n) => receiver.url(`/dave${n}`)));

    const erin = await citizen('erin');
    const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => ring(erin, { url: receiver.url(`/erin${i}`), secret: newSecret() })));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(3);
    expect(racing.filter((r) => r.status === 400).every((r) => r.body.error.code === 'invalid_request')).toBe(true);
    expect(await list(erin)).toHaveLength(3);
  });

  it('refuses at registration any URL that is not https on a public host', async () => {
    const frank = await citizen('frank');
    for (const url of [
      'http://example.com/hook',
      'https://user:pw@example.com/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://[fe80::1]/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://[::ffff:10.0.0.1]/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://intranet/hook',
      'https://example.com:0/hook',
      'not a url',
    ]) {
      const res = await ring(frank, { url });
      expect([url, res.status, res.body.error?.code, res.body.error?.field]).toEqual([url, 400, 'invalid_request', 'url']);
    }
    for (const body of [{ url: 'https://example.com', kinds: [] }, { url: 'https://example.com', kinds: ['ledger'] }, { url: 'https://example.com', secret: '' }]) {
      expect((await ring(frank, body)).body.error.code).toBe('invalid_request');
    }
    // A signing key is at least 16 bytes.
    const short = await ring(frank, { url: 'https://example.com', secret: 'fifteen-bytes!!' });
    expect([short.status, short.body.error?.code, short.body.error?.field]).toEqual([400, 'invalid_request', 'secret']);
    expect((await ring(frank, { url: 'https://example.com/sixteen', secret: 'sixteen-bytes!!!' })).status).toBe(201);
    expect((await call('DELETE', '/api/v1/doorbell?url=https%3A%2F%2Fexample.com%2Fsixteen', { key: frank.key })).status).toBe(200);
    expect((await call('POST', '/api/v1/doorbell', { body: { url: 'https://example.com' } })).status).toBe(401);
    expect(await list(frank)).toEqual([]);
  });

  it('retries a failing receiver with backoff, mutes it after 10 failures and stops; re-registering unmutes, new events flow again and a replay delivers what was missed', async () => {
    const gina = await citizen('gina');
    receiver.answer('/gina-down', 500);
    const down = (await ring(gina, { url: receiver.url('/gina-down'), secret: newSecret() })).body.doorbell;
    await ring(gina, { url: receiver.url('/gina-control'), kinds: ['post'] });
    const missed = await post(gina, 'first');
    const [failed] = await logAfter(gina, `?id=${down.id}`, () => attempts.of(down.id).some((a) => a.muted));
    expect(failed).toMatchObject({ seq: missed, attempts: 10, last_http_status: 500, last_error: 'HTTP 500' });
    expect(failed.log.map((a: any) => [a.n, a.ok, a.http_status])).toEqual(Array.from({ length: 10 }, (_, i) => [i + 1, false, 500]));
    const gaps = failed.log.slice(1).map((a: any, i: number) => a.at - failed.log[i].at);
    // Base 25 ms doubling up to 200 ms, each between half and all of it: later gaps are never shorter than early ones allow.
    gaps.forEach((gap: number, i: number) => expect(gap).toBeGreaterThanOrEqual(Math.min(200, 25 * 2 ** i) / 2 - 2));
    expect((await list(gina)).find((d) => d.id === down.id)).toMatchObject({ muted: true, failures: 10 });

    // Muted: the next post reaches the control doorbell but not the muted one, and a replay is refused.
    const later = await post(gina, 'second');
    await receiver.waitFor(() => receiver.on('/gina-control').some((r) => r.json.seq === later));
    expect(receiver.on('/gina-down')).toHaveLength(10);
    expect((await deliveries(gina, `?id=${down.id}`)).deliveries.map((d: any) => d.seq)).toEqual([missed]);
    const refused = await call('POST', '/api/v1/doorbell/replay', { key: gina.key, body: { id: down.id, after_seq: missed - 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/muted/);

    // The receiver is fixed; registering the same URL unmutes it, and the next post is delivered without a replay.
    receiver.answer('/gina-down', 200);
    const again = await ring(gina, { url: receiver.url('/gina-down'), secret: newSecret() });
    expect(again.body).toMatchObject({ updated: true, doorbell: { id: down.id, muted: false, failures: 0 } });
    const third = await post(gina, 'third');
    await attempts.waitFor(() => deliveredTo(down.id).some((a) => a.seq === third));
    expect(receiver.on('/gina-down').slice(10).map((r) => r.json.seq)).toEqual([third]);

    // A replay sends what was missed while it was muted (and the third again).
    const replay = await call('POST', '/api/v1/doorbell/replay', { key: gina.key, body: { id: down.id, after_seq: missed - 1 } });
    expect(replay.body).toEqual({ ok: true, requeued: 3, next_after_seq: null });
    const log = await logAfter(gina, `?id=${down.id}`, () => [missed, later].every((seq) => deliveredTo(down.id).some((a) => a.seq === seq)) && deliveredTo(down.id).length === 4);
    expect(log.map((d) => [d.seq, d.status])).toEqual([
      [third, 'delivered'],
      [later, 'delivered'],
      [missed, 'delivered'],
    ]);
    expect(log[2].log.at(-1)).toMatchObject({ ok: true, http_status: 200 });
    expect(receiver.on('/gina-down').slice(11).map((r) => r.json.seq).sort((a, b) => a - b)).toEqual([missed, later, third]);
  });

  it('pages the delivery log and filters it by doorbell and status', async () => {
    const hank = await citizen('hank');
    const bell = (await ring(hank, { url: receiver.url('/hank') })).body.doorbell;
    const seqs = [await post(hank, 'one'), await post(hank, 'two'), await post(hank, 'three')];
    await attempts.waitFor(() => deliveredTo(bell.id).length === 3);
    const first = await deliveries(hank, '?limit=2');
    expect(first.deliveries.map((d: any) => d.seq)).toEqual([seqs[2], seqs[1]]);
    const second = await deliveries(hank, `?limit=2&before=${first.next_before}`);
    expect(second.deliveries.map((d: any) => d.seq)).toEqual([seqs[0]]);
    expect(second.next_before).toBeNull();
    expect((await deliveries(hank, `?id=${bell.id}&status=failed`)).deliveries).toEqual([]);
    expect((await call('GET', '/api/v1/doorbell/deliveries?status=muted', { key: hank.key })).status).toBe(400);
    // Another citizen's log is not yours to read.
    const ivan = await citizen('ivan');
    expect((await deliveries(ivan, `?id=${bell.id}`)).deliveries).toEqual([]);
  });

  it('removes a doorbell by id or by url, only the caller’s own, and says which parameter is missing', async () => {
    const jade = await citizen('jade');
    const one = (await ring(jade, { url: receiver.url('/jade1') })).body.doorbell;
    await ring(jade, { url: receiver.url('/jade2') });
    const other = await citizen('kim');
    expect((await call('DELETE', `/api/v1/doorbell?id=${one.id}`, { key: other.key })).status).toBe(404);
    expect((await call('DELETE', '/api/v1/doorbell', { key: jade.key })).body.error).toMatchObject({ code: 'invalid_request', field: 'id' });
    expect((await call('DELETE', `/api/v1/doorbell?id=${one.id}&url=${encodeURIComponent(one.url)}`, { key: jade.key })).status).toBe(400);
    expect((await call('DELETE', `/api/v1/doorbell?id=door_notanid`, { key: jade.key })).status).toBe(400);
    const byId = await call('DELETE', `/api/v1/doorbell?id=${one.id}`, { key: jade.key });
    expect(byId.body).toEqual({ ok: true, removed: { id: one.id, url: one.url } });
    expect((await call('DELETE', `/api/v1/doorbell?id=${one.id}`, { key: jade.key })).body.error.code).toBe('not_found');
    const byUrl = await call('DELETE', `/api/v1/doorbell?url=${encodeURIComponent(receiver.url('/jade2'))}`, { key: jade.key });
    expect(byUrl.status).toBe(200);
    expect(await list(jade)).toEqual([]);
    // A freed slot can be used again.
    for (const n of [3, 4, 5]) expect((await ring(jade, { url: receiver.url(`/jade${n}`) })).status).toBe(201);
  });

  it('never shows a secret in any answer, nor keeps one in plain text', async () => {
    expect(secrets.length).toBeGreaterThan(5);
    const everything = answers.join('\n');
    const stored = await sql<{ t: string }>`
      select string_agg(t, ' ') as t from (
        select row_to_json(d)::text as t from vault.doorbells d
        union all select row_to_json(x)::text from vault.doorbell_deliveries x
        union all select row_to_json(a)::text from vault.doorbell_attempts a) all_rows`.execute(server.services.database.db);
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
      expect(stored.rows[0]!.t).not.toContain(secret);
    }
  });
});
