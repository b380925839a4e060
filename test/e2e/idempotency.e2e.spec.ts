import { createHash, randomBytes, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { sql } from 'kysely';
import { startEmbedded, type RunningServer } from '../../scripts/embedded';
import { freshDatabase, REDIS_URL, tempDir, testConfig, type FreshDatabase } from '../support/env';
import { call, uniqueHandle, type Reply } from '../support/http';
import { until } from '../support/until';
import { idempotencyRequestHash, subkey } from '@svc/vault';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

describe('Idempotency-Key on every POST, over HTTP against PostgreSQL and Redis', () => {
  let db: FreshDatabase;
  let server: RunningServer;
  let base: string;
  /** How far the vault's clock is ahead of the real one. */
  let skewMs = 0;

  beforeAll(async () => {
    db = await freshDatabase('idempotency_e2e');
    server = await startEmbedded(
      testConfig({ DATABASE_URL: db.url, REDIS_URL, DATA_DIR: tempDir('idempotency-e2e'), SERVICE_MASTER_KEY: randomBytes(32).toString('base64') }),
      { clock: () => Date.now() + skewMs, idempotencyPurgeEveryMs: 50 },
    );
    base = server.url;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  const register = (body: Record<string, unknown>, idempotencyKey?: string) =>
    call(base, 'POST', '/api/v1/register', { body, headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } });
  async function citizen(prefix = 'i'): Promise<Citizen> {
    const handle = uniqueHandle(prefix);
    const res = await register({ handle, model: 'm' });
    expect(res.status).toBe(201);
    return { id: res.body.agent.id, handle, key: res.body.api_key };
  }
  const post = (who: Citizen, body: Record<string, unknown>, idempotencyKey?: string) =>
    call(base, 'POST', '/api/v1/posts', { key: who.key, body, headers: idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey } });
  const replayed = (res: Reply) => res.headers.get('idempotent-replayed');
  const ledgerHead = async (): Promise<number> => (await call(base, 'GET', '/readyz')).body.ledger_head;
  /** The citizen's ledger events and the posts the read model holds for them (read-your-writes). */
  async function record(who: Citizen): Promise<{ types: string[]; posts: Array<{ id: string }> }> {
    const res = await call(base, 'GET', `/api/v1/record/${who.handle}?limit=1000`);
    expect(res.status).toBe(200);
    return { types: res.body.events.map((e: { type: string }) => e.type), posts: res.body.posts };
  }

  it('answers 50 concurrent identical posts with one key by one post and 50 identical replies', async () => {
    const alice = await citizen('a');
    const key = randomUUID();
    const body = { body: 'one signal, sent by an impatient agent', tags: ['retry'] };
    const replies = await Promise.all(Array.from({ length: 50 }, () => post(alice, body, key)));

    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(201));
    const first = replies[0]!.body;
    expect(first).toMatchObject({ ok: true, post: { body: body.body, author: { id: alice.id } }, ledger: { seq: expect.any(Number) } });
    for (const reply of replies) expect(reply.body).toEqual(first);
    expect(replies.filter((r) => replayed(r) === 'true')).toHaveLength(49);
    expect(replies.filter((r) => replayed(r) === null)).toHaveLength(1);

    const { types, posts } = await record(alice);
    expect(types.filter((t) => t === 'PostCreated')).toHaveLength(1);
    expect(posts.map((p) => p.id)).toEqual([first.post.id]);
    // 49 of the 50 wait on the first: on a loaded 2-core machine that is more than jest's default 5 s.
  }, 30_000);

  /** What a process leaves when it dies while holding a key: the row still running, its lease run out, no reply. */
  const dieHolding = (who: Citizen, key: string) =>
    sql`update vault.idempotency_keys set state = 'running', status = null, response = null, lease_until = now() where scope = ${who.id} and key = ${key}`.execute(
      server.services.database.db,
    );

  it('answers a retry after the process died between the write and the reply with that write, not a second one', async () => {
    const [alice, bob] = [await citizen('d'), await citizen('e')];
    const key = randomUUID();
    const first = await post(alice, { body: 'written, then the process died' }, key);
    expect(first.status).toBe(201);
    await dieHolding(alice, key);

    const retry = await post(alice, { body: 'written, then the process died' }, key);
    expect(retry.status).toBe(201);
    expect(retry.body.post).toEqual(first.body.post);
    expect(retry.body.ledger).toEqual(first.body.ledger);
    expect((await record(alice)).types.filter((t) => t === 'PostCreated')).toHaveLength(1);

    // The same for a bounty and a submission to it.
    const bountyBody = { title: 'find it', body: 'conditions', reward_sol: 0.01 };
    const bounty = await call(base, 'POST', '/api/v1/bounties', { key: alice.key, body: bountyBody, headers: { 'Idempotency-Key': key + 'b' } });
    await dieHolding(alice, key + 'b');
    const bountyAgain = await call(base, 'POST', '/api/v1/bounties', { key: alice.key, body: bountyBody, headers: { 'Idempotency-Key': key + 'b' } });
    expect(bountyAgain.body.bounty.id).toBe(bounty.body.bounty.id);
    const path = `/api/v1/bounties/${bounty.body.bounty.id}/submissions`;
    const submission = await call(base, 'POST', path, { key: bob.key, body: { body: 'mine' }, headers: { 'Idempotency-Key': key } });
    await dieHolding(bob, key);
    const submissionAgain = await call(base, 'POST', path, { key: bob.key, body: { body: 'mine' }, headers: { 'Idempotency-Key': key } });
    expect(submissionAgain.status).toBe(201);
    expect(submissionAgain.body.submission.id).toBe(submission.body.submission.id);
    const listed = await call(base, 'GET', `/api/v1/bounties/${bounty.body.bounty.id}`);
    expect(listed.body.submissions).toHaveLength(1);
    expect((await record(alice)).types.filter((t) => t === 'BountyPosted')).toHaveLength(1);
  });

  it('writes once when the process died before writing: the retry runs the request itself', async () => {
    const alice = await citizen('f');
    const key = randomUUID();
    const body = { body: 'never written by the first attempt' };
    // The request as the service hashes it (after its defaults), taken from a twin sent under another key.
    const twin = randomUUID();
    const bob = await citizen('g');
    expect((await post(bob, body, twin)).status).toBe(201);
    const { rows } = await sql<{ request_hash: string }>`select request_hash from vault.idempotency_keys where scope = ${bob.id} and key = ${twin}`.execute(server.services.database.db);
    const hash = rows[0]!.request_hash;
    // The first attempt took the key and died before it wrote anything.
    await sql`insert into vault.idempotency_keys (scope, key, request_hash, attempt, state, lease_until) values (${alice.id}, ${key}, ${hash}, 'dead', 'running', now())`.execute(
      server.services.database.db,
    );
    const retry = await post(alice, body, key);
    expect(retry.status).toBe(201);
    expect((await record(alice)).posts.map((p) => p.id)).toEqual([retry.body.post.id]);
    expect((await post(alice, body, key)).body.post.id).toBe(retry.body.post.id);
  });

  it('replays a completed write with Idempotent-Replayed: true and writes nothing more', async () => {
    const alice = await citizen('r');
    const key = randomUUID();
    const created = await post(alice, { body: 'gm' }, key);
    expect(created.status).toBe(201);
    expect(replayed(created)).toBeNull();
    const head = await ledgerHead();
    const again = await post(alice, { body: 'gm' }, key);
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(created.body);
    expect(await ledgerHead()).toBe(head);
    // Keys in another order are the same body.
    const reordered = await call(base, 'POST', '/api/v1/posts', {
      key: alice.key,
      raw: '{"tags":[],"body":"x"}',
      headers: { 'content-type': 'application/json', 'Idempotency-Key': `${key}-2` },
    });
    const inOrder = await call(base, 'POST', '/api/v1/posts', { key: alice.key, raw: '{"body":"x","tags":[]}', headers: { 'content-type': 'application/json', 'Idempotency-Key': `${key}-2` } });
    expect(replayed(inOrder)).toBe('true');
    expect(inOrder.body).toEqual(reordered.body);
    // Without a key, every POST is a new write.
    const one = await post(alice, { body: 'gm' });
    const two = await post(alice, { body: 'gm' });
    expect(two.body.post.id).not.toBe(one.body.post.id);
  });

  it('refuses the same key with another body: 409 idempotency_conflict in the envelope', async () => {
    const alice = await citizen('c');
    const key = randomUUID();
    expect((await post(alice, { body: 'first' }, key)).status).toBe(201);
    const head = await ledgerHead();
    const conflict = await post(alice, { body: 'second' }, key);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ ok: false, error: { code: 'idempotency_conflict', message: expect.stringContaining('Idempotency-Key') } });
    // Another path is another request too.
    const vote = await call(base, 'POST', '/api/v1/votes', { key: alice.key, body: { post_id: 'post_01ARZ3NDEKTSV4RRFFQ69G5FAV', value: 1 }, headers: { 'Idempotency-Key': key } });
    expect(vote.status).toBe(409);
    expect(vote.body.error.code).toBe('idempotency_conflict');
    expect(await ledgerHead()).toBe(head);
    expect((await record(alice)).types.filter((t) => t === 'PostCreated')).toHaveLength(1);
  });

  it('keeps citizens apart: another citizen with the same key makes its own write', async () => {
    const [alice, bob] = [await citizen('x'), await citizen('y')];
    const key = randomUUID();
    const mine = await post(alice, { body: 'same words' }, key);
    const theirs = await post(bob, { body: 'same words' }, key);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(replayed(theirs)).toBeNull();
    expect(theirs.body.post.author.id).toBe(bob.id);
    expect(theirs.body.post.id).not.toBe(mine.body.post.id);
    const bobsOther = await post(bob, { body: 'other words' }, key);
    expect(bobsOther.body.error.code).toBe('idempotency_conflict');
  });

  it('keeps a refusal like a success, but not a request that failed validation', async () => {
    const alice = await citizen('f');
    const key = randomUUID();
    const orphan = { body: 'a reply to nothing', parent_id: 'post_01ARZ3NDEKTSV4RRFFQ69G5FAV' };
    const refused = await post(alice, orphan, key);
    expect(refused.status).toBe(404);
    const again = await post(alice, orphan, key);
    expect(again.status).toBe(404);
    expect(replayed(again)).toBe('true');
    expect(again.body).toEqual(refused.body);
    expect(again.body).toEqual({ ok: false, error: { code: 'not_found', message: expect.any(String) } });

    // Validation answers before the key is taken: the fixed request with the same key runs.
    const other = randomUUID();
    expect((await post(alice, { body: '' }, other)).status).toBe(400);
    const fixed = await post(alice, { body: 'fixed' }, other);
    expect(fixed.status).toBe(201);
    expect(replayed(fixed)).toBeNull();
  });

  it('retries a registration with one key: the same api_key, and no second registration', async () => {
    const key = randomUUID();
    const handle = uniqueHandle('reg');
    const first = await register({ handle, model: 'm', bio: 'retried' }, key);
    expect(first.status).toBe(201);
    const head = await ledgerHead();
    const credentials = async () => Number((await sql<{ n: string }>`select count(*) as n from vault.credentials`.execute(server.services.database.db)).rows[0]!.n);
    const before = await credentials();
    const retries = await Promise.all([1, 2, 3].map(() => register({ handle, model: 'm', bio: 'retried' }, key)));
    for (const retry of retries) {
      expect(retry.status).toBe(201);
      expect(replayed(retry)).toBe('true');
      expect(retry.body).toEqual(first.body);
    }
    expect(retries[0]!.body.api_key).toBe(first.body.api_key);
    expect(retries[0]!.body.wallet.secret_key).toBe(first.body.wallet.secret_key);
    expect(await ledgerHead()).toBe(head);
    expect(await credentials()).toBe(before);
    expect((await record({ id: first.body.agent.id, handle, key: first.body.api_key })).types).toEqual(['CitizenRegistered']);
    expect((await call(base, 'GET', '/api/v1/me', { key: first.body.api_key })).status).toBe(200);

    // The stored reply is sealed: no key or secret at rest.
    const rows = await sql<{ t: string }>`select string_agg(row_to_json(k)::text, ' ') as t from vault.idempotency_keys k`.execute(server.services.database.db);
    expect(rows.rows[0]!.t).not.toContain(first.body.api_key);
    expect(rows.rows[0]!.t).not.toContain(first.body.wallet.secret_key);

    const otherHandle = await register({ handle: uniqueHandle('reg'), model: 'm' }, key);
    expect(otherHandle.status).toBe(409);
    expect(otherHandle.body.error.code).toBe('idempotency_conflict');
  });

  it('gives a registration’s secrets again only to a prompt retry: after SECRET_REPLAY_MS the same ids, without them', async () => {
    const key = randomUUID();
    const body = { handle: uniqueHandle('late'), model: 'm' };
    const first = await register(body, key);
    expect(first.status).toBe(201);
    skewMs = server.services.config.secretReplayMs - 1_000;
    try {
      expect((await register(body, key)).body).toEqual(first.body);
      skewMs = server.services.config.secretReplayMs + 1;
      const late = await register(body, key);
      expect(late.status).toBe(201);
      expect(replayed(late)).toBe('true');
      const { api_key, wallet, secrets_already_shown, ...rest } = late.body;
      const { api_key: _key, wallet: firstWallet, ...firstRest } = first.body;
      expect(rest).toEqual(firstRest);
      expect(api_key).toBeNull();
      expect(wallet).toEqual({ ...firstWallet, secret_key: null });
      expect(secrets_already_shown).toMatch(/api_key and wallet\.secret_key were shown in the first reply .* cannot be shown again/);
      // The citizen's key is still the one first shown: only its replay is over.
      expect((await call(base, 'GET', '/api/v1/me', { key: first.body.api_key })).status).toBe(200);
    } finally {
      skewMs = 0;
    }
  });

  it('gives a rotated key again only to a prompt retry with the new key', async () => {
    const alice = await citizen('rot');
    const key = randomUUID();
    const rotate = (apiKey: string) => call(base, 'POST', '/api/v1/rotate', { key: apiKey, body: {}, headers: { 'Idempotency-Key': key } });
    const rotated = await rotate(alice.key);
    expect(rotated.status).toBe(200);
    // The old key is dead: it cannot fetch the rotation that killed it.
    expect((await rotate(alice.key)).status).toBe(401);
    expect((await rotate(rotated.body.api_key)).body).toEqual(rotated.body);
    skewMs = server.services.config.secretReplayMs + 1;
    try {
      const late = await rotate(rotated.body.api_key);
      expect(late.status).toBe(200);
      expect(late.body).toMatchObject({ ok: true, api_key: null, secrets_already_shown: expect.stringContaining('api_key') });
    } finally {
      skewMs = 0;
    }
  });

  it('refuses a malformed key with 400 invalid_request naming the header, on POST only', async () => {
    const alice = await citizen('k');
    for (const bad of ['', 'has space', 'x'.repeat(256), 'é']) {
      const res = await call(base, 'POST', '/api/v1/posts', {
        key: alice.key,
        body: { body: 'gm' },
        headers: { 'Idempotency-Key': Buffer.from(bad, 'utf8').toString('latin1') },
      });
      expect([bad, res.status]).toEqual([bad, 400]);
      expect(res.body).toEqual({ ok: false, error: { code: 'invalid_request', message: expect.stringContaining('Idempotency-Key'), field: 'Idempotency-Key' } });
    }
    expect((await record(alice)).types.filter((t) => t === 'PostCreated')).toHaveLength(0);
    expect((await call(base, 'GET', '/api/v1/posts', { headers: { 'Idempotency-Key': 'has space' } })).status).toBe(200);
  });

  it('documents the header and the 409 on every POST operation of the OpenAPI document', async () => {
    const openapi = (await call(base, 'GET', '/openapi.json')).body;
    // MCP takes the key per tool call, as an argument, not on the JSON-RPC exchange.
    const mcp = new Set(['/mcp', '/mcp/read']);
    const posts = Object.entries(openapi.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) => (ops.post && !mcp.has(path) ? [[path, ops.post]] : []));
    expect(posts.length).toBeGreaterThanOrEqual(10);
    for (const [path, operation] of posts) {
      const header = operation.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
      expect([path, header]).toEqual([path, expect.objectContaining({ in: 'header', required: false, description: expect.stringContaining('never buys twice') })]);
      const conflict = openapi.components.responses[operation.responses['409'].$ref.split('/').pop()];
      expect([path, conflict.content['application/json'].schema.properties.error.properties.code.enum]).toEqual([
        path,
        expect.arrayContaining(['idempotency_conflict', 'idempotency_in_progress']),
      ]);
    }
    const gets = Object.values(openapi.paths as Record<string, Record<string, any>>).flatMap((ops) => (ops.get ? [ops.get] : []));
    for (const operation of gets) expect(operation.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key')).toBe(false);
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(openapi);
    expect(result.errors ?? []).toEqual([]);
  });

  it('keeps of a request only a keyed hash, which proves no guess of a short note, and purges an expired key with no request coming', async () => {
    const alice = await citizen('hash');
    const key = randomUUID();
    const body = { key: 'pin', value: '1234' };
    expect((await call(base, 'POST', '/api/v1/memory', { key: alice.key, body, headers: { 'Idempotency-Key': key } })).status).toBeLessThan(300);
    const rows = () => sql<{ request_hash: string }>`select request_hash from vault.idempotency_keys where key = ${key}`.execute(server.services.database.db);
    const [row] = (await rows()).rows;
    const guess = createHash('sha256').update(canonicalize({ method: 'POST', path: '/api/v1/memory', body })!).digest('hex');
    expect(row!.request_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row!.request_hash).not.toBe(guess);
    const masterKey = Buffer.from(server.services.config.serviceMasterKey!, 'base64');
    expect(row!.request_hash).toBe(idempotencyRequestHash(subkey(masterKey, 'request-hash'), 'POST', '/api/v1/memory', body));

    // A day and an hour old: the workers' loop forgets it, though no request begins meanwhile.
    await sql`update vault.idempotency_keys set created_at = now() - interval '25 hours' where key = ${key}`.execute(server.services.database.db);
    await until('the expired key to be purged', 10_000, async () => (await rows()).rows.length === 0);
  });
});
