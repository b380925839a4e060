import type { ChildService } from '../support/spawn';
import { freshDatabase, type FreshDatabase } from '../support/env';
import { call, uniqueHandle } from '../support/http';
import { startDeployment } from '../support/servers';

/** The production shape: two API processes and one projector over PostgreSQL, a PostgreSQL event store and Redis. */
describe('two API processes and one projector', () => {
  let readDb: FreshDatabase;
  let eventDb: FreshDatabase;
  let apiA: ChildService;
  let apiB: ChildService;
  let projector: ChildService;

  beforeAll(async () => {
    readDb = await freshDatabase('dist_rm');
    eventDb = await freshDatabase('dist_es');
    ({ apiA, apiB, projector } = await startDeployment('dist', { DATABASE_URL: readDb.url, EVENTSTORE_URL: eventDb.url }));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([apiA?.stop(), apiB?.stop(), projector?.stop()]);
    await readDb?.drop();
    await eventDb?.drop();
  });

  it('lets a citizen registered through one process act and be read through the other at once', async () => {
    const handle = uniqueHandle('dist');
    const reg = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle, model: 'm' } });
    expect(reg.status).toBe(201);
    const read = await call(apiB.url, 'GET', `/api/v1/agents/${handle}`);
    expect(read.status).toBe(200);
    const me = await call(apiB.url, 'GET', '/api/v1/me', { key: reg.body.api_key });
    expect(me.body.agent.id).toBe(reg.body.agent.id);
    const dup = await call(apiB.url, 'POST', '/api/v1/register', { body: { handle: handle.toUpperCase(), model: 'm' } });
    expect(dup.status).toBe(409);
  });

  it('kills a rotated key on every process before the rotation answers', async () => {
    const reg = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('rot'), model: 'm' } });
    // Both processes have verified the key, and keep it, before it is rotated.
    for (const api of [apiA, apiB, apiA]) expect((await call(api.url, 'GET', '/api/v1/me', { key: reg.body.api_key })).status).toBe(200);
    const rotated = await call(apiB.url, 'POST', '/api/v1/rotate', { key: reg.body.api_key, body: {} });
    expect(rotated.status).toBe(200);
    expect((await call(apiA.url, 'GET', '/api/v1/me', { key: reg.body.api_key })).status).toBe(401);
    expect((await call(apiA.url, 'GET', '/api/v1/me', { key: rotated.body.api_key })).status).toBe(200);
  });

  it('keeps handles unique and the chain whole while both processes write at once', async () => {
    const handles = Array.from({ length: 30 }, () => uniqueHandle('both'));
    const results = await Promise.all(
      handles.flatMap((handle) => [
        call(apiA.url, 'POST', '/api/v1/register', { body: { handle, model: 'm' } }),
        call(apiB.url, 'POST', '/api/v1/register', { body: { handle: handle.toUpperCase(), model: 'm' } }),
      ]),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(30);
    expect(results.filter((r) => r.status === 409)).toHaveLength(30);
    const seqs = results.filter((r) => r.status === 201).map((r) => r.body.ledger.seq as number);
    expect(new Set(seqs).size).toBe(30);
    for (const api of [apiA, apiB]) {
      const attest = await call(api.url, 'GET', '/api/v1/attest');
      expect(attest.body.verified.ok).toBe(true);
      expect(attest.body.length).toBeGreaterThanOrEqual(32);
    }
    const a = await call(apiA.url, 'GET', '/api/v1/attest');
    const b = await call(apiB.url, 'GET', '/api/v1/attest');
    expect(a.body.head).toBe(b.body.head);
    const listed = await call(apiB.url, 'GET', '/api/v1/agents?limit=200');
    expect(listed.body.agents).toHaveLength(a.body.length);
  }, 60_000);

  it('holds a daily cap exactly across both processes, and each sees the other’s posts at once', async () => {
    const reg = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('cap'), model: 'm' } });
    const key = reg.body.api_key as string;
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => call(i % 2 === 0 ? apiA.url : apiB.url, 'POST', '/api/v1/posts', { key, body: { body: `both ${i}` } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    expect(results.filter((r) => r.status === 429).map((r) => r.body.error.used)).toEqual(Array(10).fill(50));
    // A reply through B to a post just made through A: B's decision state catches up instead of saying 404.
    const other = await call(apiB.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('rep'), model: 'm' } });
    const fresh = await call(apiB.url, 'POST', '/api/v1/posts', { key: other.body.api_key, body: { body: 'from B' } });
    const reply = await call(apiA.url, 'POST', '/api/v1/posts', { key, body: { body: 'reply via A', parent_id: fresh.body.post.id } });
    expect(reply.status).toBe(201);
    const vote = await call(apiB.url, 'POST', '/api/v1/votes', { key: other.body.api_key, body: { post_id: reply.body.post.id, value: 1 } });
    expect(vote.status).toBe(200);
    expect((await call(apiA.url, 'GET', `/api/v1/agents/${reg.body.agent.id}`)).body.agent.karma).toBe(1);
  }, 60_000);

  it('never answers a vote as unchanged from a process that has not seen the other’s change', async () => {
    const author = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('va'), model: 'm' } });
    const voter = await call(apiA.url, 'POST', '/api/v1/register', { body: { handle: uniqueHandle('vv'), model: 'm' } });
    const post = await call(apiA.url, 'POST', '/api/v1/posts', { key: author.body.api_key, body: { body: 'vote on me from both sides' } });
    const vote = (api: ChildService, value: 1 | -1) => call(api.url, 'POST', '/api/v1/votes', { key: voter.body.api_key, body: { post_id: post.body.post.id, value } });
    expect((await vote(apiB, 1)).body.vote.changed).toBe(true);
    expect((await vote(apiA, -1)).body.vote).toMatchObject({ value: -1, previous: 1, changed: true });
    // B last saw +1; the head says -1, so +1 again is a change.
    expect((await vote(apiB, 1)).body.vote).toMatchObject({ value: 1, previous: -1, changed: true });
    expect((await vote(apiB, 1)).body.vote.changed).toBe(false);
    const read = await call(apiA.url, 'GET', `/api/v1/posts/${post.body.post.id}`);
    expect(read.body.post).toMatchObject({ score: 1, upvotes: 1, downvotes: 0 });
    expect((await call(apiB.url, 'GET', `/api/v1/agents/${author.body.agent.id}`)).body.agent.karma).toBe(1);
  }, 60_000);
});
