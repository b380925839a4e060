import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { IdempotencyStore, Keyring, idempotencyRequestHash, Vault, type IdempotencyBegin, type StoredResponse } from '@svc/vault';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { until } from '../support/until';

/** Any key: what is tested is how requests compare under one. */
const HASH_KEY = Buffer.alloc(32, 1);

jest.setTimeout(30_000);

const SCOPE = 'agent_01JIDEMPOTENCYINTEGRATION0';
const HASH = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gm' });
const OTHER_HASH = idempotencyRequestHash(HASH_KEY, 'POST', '/api/v1/posts', { body: 'gn' });

const reply = (n: number): StoredResponse => ({ status: 201, body: { ok: true, post: { id: `post_${n}` } }, headers: { 'X-Note': `n${n}` } });

function ran(outcome: IdempotencyBegin): string {
  if (outcome.kind !== 'run') throw new Error(`expected to run, got ${JSON.stringify(outcome)}`);
  return outcome.attempt;
}

describe('Idempotency-Key rows in the vault, against PostgreSQL', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: IdempotencyStore;
  const masterKey = randomBytes(32);
  /** Other API processes: their own stores over the same database. */
  const others: IdempotencyStore[] = [];
  const process2 = () => {
    const other = new IdempotencyStore(database, masterKey);
    others.push(other);
    return other;
  };

  beforeAll(async () => {
    db = await freshDatabase('idempotency');
    database = await openDatabase({ url: db.url, dataDir: tempDir('idempotency'), poolSize: 12 });
    store = (await new Vault(database, masterKey).init()).idempotency;
  });
  afterAll(async () => {
    store?.close();
    others.forEach((o) => o.close());
    await database?.close();
    await db?.drop();
  });

  const row = async (key: string, scope = SCOPE) =>
    (await database.db.selectFrom('vault.idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirst()) as
      | Record<string, any>
      | undefined;

  it('runs the first request, then replays its stored reply (status, body and headers) to every retry', async () => {
    const key = randomUUID();
    const first = await store.begin(SCOPE, key, HASH);
    expect(first).toEqual({ kind: 'run', attempt: expect.any(String), resumed: false, createdAt: expect.any(Number), requestHash: HASH });
    expect(await store.complete(SCOPE, key, ran(first), reply(1))).toBe(true);
    expect(await store.begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(1) });
    expect(await process2().begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(1) });
    // Completing twice, or by an attempt that does not hold the key, changes nothing.
    expect(await store.complete(SCOPE, key, ran(first), reply(2))).toBe(false);
    expect(await store.complete(SCOPE, key, randomUUID(), reply(3))).toBe(false);
    expect(await store.begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(1) });
  });

  it('knows a retry across a master key rotation for the same request, and resumes it with the first hash', async () => {
    const key = randomUUID();
    const request = ['POST', '/api/v1/memory', { key: 'pin', value: '1234' }] as const;
    const held = ran(await store.begin('agent_rot', key, store.requestHashes(...request)));
    const rotated = new IdempotencyStore(database, new Keyring(randomBytes(32), [masterKey]));
    const [newHash, oldHash] = rotated.requestHashes(...request);
    expect(newHash).not.toBe(oldHash);
    expect(oldHash).toBe(store.requestHashes(...request)[0]);
    // The first attempt failed with its outcome unknown: the retry after the rotation takes it over.
    await store.letGo('agent_rot', key, held);
    const resumed = await rotated.begin('agent_rot', key, rotated.requestHashes(...request));
    expect(resumed).toMatchObject({ kind: 'run', resumed: true, requestHash: oldHash });
    expect(await rotated.complete('agent_rot', key, ran(resumed), reply(9))).toBe(true);
    expect(await rotated.begin('agent_rot', key, rotated.requestHashes(...request))).toMatchObject({ kind: 'replay', body: reply(9).body });
    // Without the old key, the same request is another one.
    const forgot = new IdempotencyStore(database, randomBytes(32));
    expect(await forgot.begin('agent_rot', key, forgot.requestHashes(...request))).toEqual({ kind: 'conflict' });
  });

  it('answers conflict to the same key with another request, while it runs and once it is done', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    expect(await store.begin(SCOPE, key, OTHER_HASH)).toEqual({ kind: 'conflict' });
    await store.complete(SCOPE, key, attempt, reply(1));
    expect(await store.begin(SCOPE, key, OTHER_HASH)).toEqual({ kind: 'conflict' });
    expect(await store.begin(SCOPE, key, HASH)).toMatchObject({ kind: 'replay', status: 201 });
  });

  it('keeps each scope apart: another citizen with the same key runs its own request', async () => {
    const key = randomUUID();
    await store.complete(SCOPE, key, ran(await store.begin(SCOPE, key, HASH)), reply(1));
    const theirs = await store.begin('agent_01JIDEMPOTENCYSOMEONEELSE0', key, OTHER_HASH);
    expect(theirs).toMatchObject({ kind: 'run', resumed: false });
    await store.complete('agent_01JIDEMPOTENCYSOMEONEELSE0', key, ran(theirs), reply(2));
    expect(await store.begin('agent_01JIDEMPOTENCYSOMEONEELSE0', key, OTHER_HASH)).toEqual({ kind: 'replay', ...reply(2) });
    expect(await store.begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(1) });
  });

  it('seals the stored reply: the row holds no plaintext, and the seal is bound to its scope and key', async () => {
    const key = randomUUID();
    const secret = `svc_sk_${randomBytes(24).toString('hex')}`;
    await store.complete('public', key, ran(await store.begin('public', key, HASH)), { status: 201, body: { ok: true, api_key: secret }, headers: {} });
    const raw = await sql<{ t: string }>`select row_to_json(k)::text as t from vault.idempotency_keys k where key = ${key}`.execute(database.db);
    expect(raw.rows).toHaveLength(1);
    expect(raw.rows[0]!.t).not.toContain(secret);
    expect(raw.rows[0]!.t).not.toContain(Buffer.from(secret).toString('base64'));
    expect(await store.begin('public', key, HASH)).toMatchObject({ kind: 'replay', body: { api_key: secret } });

    // Moved under another scope's key, the sealed reply does not open.
    const moved = randomUUID();
    await store.complete(SCOPE, moved, ran(await store.begin(SCOPE, moved, HASH)), reply(1));
    await database.db.updateTable('vault.idempotency_keys').set({ response: (await row(key, 'public'))!.response }).where('key', '=', moved).execute();
    await expect(store.begin(SCOPE, moved, HASH)).rejects.toThrow();
  });

  it('lets exactly one of 50 concurrent requests (across two processes) run; the others wait and replay its reply', async () => {
    const key = randomUUID();
    const other = process2();
    let completed = false;
    const outcomes = Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? store : other).begin(SCOPE, key, HASH).then((outcome) => ({ outcome, afterComplete: completed })),
    );
    const first = await Promise.race(outcomes);
    const attempt = ran(first.outcome);
    completed = true;
    expect(await store.complete(SCOPE, key, attempt, reply(7))).toBe(true);
    const all = await Promise.all(outcomes);
    expect(all.filter((o) => o.outcome.kind === 'run')).toHaveLength(1);
    const replays = all.filter((o) => o.outcome.kind === 'replay');
    expect(replays).toHaveLength(49);
    for (const r of replays) expect(r).toEqual({ outcome: { kind: 'replay', ...reply(7) }, afterComplete: true });
  });

  it('answers busy past the wait bound while a live holder runs', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    expect(await process2().begin(SCOPE, key, HASH, { waitMs: 0 })).toEqual({ kind: 'busy' });
    expect(await process2().begin(SCOPE, key, HASH, { waitMs: 50 })).toEqual({ kind: 'busy' });
    await store.abandon(SCOPE, key, attempt);
  });

  it('lets go of a key after a fault: the next attempt takes it over at once as resumed, from the same first use', async () => {
    const key = randomUUID();
    const first = await store.begin(SCOPE, key, HASH);
    const attempt = ran(first);
    expect(await store.letGo(SCOPE, key, attempt)).toBe(true);
    const retry = await process2().begin(SCOPE, key, HASH, { waitMs: 0 });
    expect(retry).toEqual({ kind: 'run', attempt: expect.any(String), resumed: true, createdAt: (first as { createdAt: number }).createdAt, requestHash: HASH });
    // The faulted attempt holds nothing any more.
    expect(await store.complete(SCOPE, key, attempt, reply(9))).toBe(false);
    expect(await store.letGo(SCOPE, key, attempt)).toBe(false);
  });

  it('lets a retry take over once a dead holder’s lease runs out, and the dead attempt can no longer complete', async () => {
    const key = randomUUID();
    const dead = process2();
    // A lease of 0 ms: the holder died the moment it began.
    const deadAttempt = ran(await dead.begin(SCOPE, key, HASH, { leaseMs: 0 }));
    dead.close();
    const retry = await store.begin(SCOPE, key, HASH);
    expect(retry).toEqual({ kind: 'run', attempt: expect.any(String), resumed: true, createdAt: expect.any(Number), requestHash: HASH });
    const attempt = ran(retry);
    expect(attempt).not.toBe(deadAttempt);
    // The new holder's lease is live: nobody else takes it over.
    expect(await process2().begin(SCOPE, key, HASH, { waitMs: 0 })).toEqual({ kind: 'busy' });
    expect(await dead.complete(SCOPE, key, deadAttempt, reply(1))).toBe(false);
    expect(await dead.abandon(SCOPE, key, deadAttempt)).toBe(false);
    expect(await store.complete(SCOPE, key, attempt, reply(2))).toBe(true);
    expect(await process2().begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(2) });
  });

  it('renews a live holder’s lease, so a slow request is never taken over', async () => {
    const key = randomUUID();
    const slow = process2();
    const attempt = ran(await slow.begin(SCOPE, key, HASH, { leaseMs: 1_500 }));
    const firstLease = new Date((await row(key))!.lease_until).getTime();
    await until('the first lease to have run out by the database clock', 10_000, async () => {
      const now = await sql<{ now: Date }>`select now() as now`.execute(database.db);
      return new Date(now.rows[0]!.now).getTime() > firstLease;
    }, 10);
    expect(new Date((await row(key))!.lease_until).getTime()).toBeGreaterThan(firstLease);
    expect(await store.begin(SCOPE, key, HASH, { waitMs: 0 })).toEqual({ kind: 'busy' });
    expect(await slow.complete(SCOPE, key, attempt, reply(3))).toBe(true);
    expect(await store.begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(3) });
  });

  it('abandon frees the key, so the retry runs again; only the holder may abandon', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    expect(await store.abandon(SCOPE, key, randomUUID())).toBe(false);
    expect(await row(key)).toBeDefined();
    expect(await store.abandon(SCOPE, key, attempt)).toBe(true);
    expect(await row(key)).toBeUndefined();
    const again = await store.begin(SCOPE, key, OTHER_HASH);
    expect(again).toEqual({ kind: 'run', attempt: expect.any(String), resumed: false, createdAt: expect.any(Number), requestHash: OTHER_HASH });
    await store.complete(SCOPE, key, ran(again), reply(4));
    // A completed key is never abandoned.
    expect(await store.abandon(SCOPE, key, ran(again))).toBe(false);
    expect(await store.begin(SCOPE, key, OTHER_HASH)).toEqual({ kind: 'replay', ...reply(4) });
  });

  it('a retry waiting on a holder that abandons runs the request itself', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    const waiting = process2().begin(SCOPE, key, HASH);
    await store.abandon(SCOPE, key, attempt);
    expect(await waiting).toEqual({ kind: 'run', attempt: expect.any(String), resumed: false, createdAt: expect.any(Number), requestHash: HASH });
  });

  it('replays a reply’s secrets only for a prompt retry, then the reply without them, and then no longer keeps them', async () => {
    let now = Date.now();
    const clocked = new IdempotencyStore(database, masterKey, { tuning: { now: () => now } });
    others.push(clocked);
    const key = randomUUID();
    const secret = `svc_sk_${randomBytes(24).toString('hex')}`;
    const whole: StoredResponse = { status: 201, body: { ok: true, agent: { id: 'agent_x' }, api_key: secret }, headers: {} };
    const without = { body: { ok: true, agent: { id: 'agent_x' }, api_key: null, secrets_already_shown: 'shown' }, headers: {} };
    const attempt = ran(await clocked.begin('public', key, HASH));
    expect(await clocked.complete('public', key, attempt, whole, { withoutSecrets: without, forMs: 600_000 })).toBe(true);
    expect(await clocked.begin('public', key, HASH)).toEqual({ kind: 'replay', ...whole });
    now += 599_999;
    expect(await clocked.begin('public', key, HASH)).toEqual({ kind: 'replay', ...whole });
    // Nothing to forget yet.
    expect(await clocked.forgetShownSecrets()).toBe(0);
    now += 1;
    expect(await clocked.begin('public', key, HASH)).toEqual({ kind: 'replay', status: 201, ...without });
    // The whole reply is dropped from the row; what is left opens to the reply without secrets, as before.
    const before = (await row(key, 'public'))!;
    expect(await clocked.forgetShownSecrets()).toBe(1);
    const after = (await row(key, 'public'))!;
    expect(after.response).toBe(before.response_without_secrets);
    expect([after.response_without_secrets, after.secrets_until]).toEqual([null, null]);
    expect(await clocked.begin('public', key, HASH)).toEqual({ kind: 'replay', status: 201, ...without });
    expect(await process2().begin('public', key, HASH)).toEqual({ kind: 'replay', status: 201, ...without });
  });

  it('purges keys older than the bound, except one whose holder still runs', async () => {
    const keys = { oldDone: randomUUID(), oldDead: randomUUID(), oldLive: randomUUID(), fresh: randomUUID() };
    for (const [name, key] of Object.entries(keys)) {
      const attempt = ran(await store.begin(SCOPE, key, HASH, { leaseMs: name === 'oldDead' ? 0 : 60_000 }));
      if (name !== 'oldDead' && name !== 'oldLive') await store.complete(SCOPE, key, attempt, reply(5));
    }
    await database.db
      .updateTable('vault.idempotency_keys')
      .set({ created_at: sql`now() - interval '25 hours'` })
      .where('key', 'in', [keys.oldDone, keys.oldDead, keys.oldLive])
      .execute();
    expect(await store.purgeOlderThan(24 * 3_600_000)).toBe(2);
    expect(await row(keys.oldDone)).toBeUndefined();
    expect(await row(keys.oldDead)).toBeUndefined();
    expect(await row(keys.oldLive)).toMatchObject({ state: 'running' });
    expect(await store.begin(SCOPE, keys.fresh, HASH)).toMatchObject({ kind: 'replay' });
    // A purged key is a new key.
    expect(await store.begin(SCOPE, keys.oldDone, OTHER_HASH)).toMatchObject({ kind: 'run', resumed: false });
  });
});

/** `npm start`'s shape: the same rows on PGlite (the embedded database). */
describe('Idempotency-Key rows on the embedded database (PGlite)', () => {
  let database: SqlDatabase;
  let store: IdempotencyStore;

  beforeAll(async () => {
    database = await openDatabase({ dataDir: tempDir('idempotency-pglite') });
    store = (await new Vault(database, randomBytes(32)).init()).idempotency;
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await database?.close();
  });

  it('runs, replays, conflicts, takes over and purges', async () => {
    const key = randomUUID();
    const attempt = ran(await store.begin(SCOPE, key, HASH));
    expect(await store.begin(SCOPE, key, OTHER_HASH)).toEqual({ kind: 'conflict' });
    expect(await store.complete(SCOPE, key, attempt, reply(1))).toBe(true);
    expect(await store.begin(SCOPE, key, HASH)).toEqual({ kind: 'replay', ...reply(1) });

    const dead = randomUUID();
    ran(await store.begin(SCOPE, dead, HASH, { leaseMs: 0 }));
    expect(await store.begin(SCOPE, dead, HASH)).toMatchObject({ kind: 'run', resumed: true });
    expect(await store.purgeOlderThan(24 * 3_600_000)).toBe(0);
  });
});
