import { registerCitizen } from '../support/citizens';
import { call } from '../support/http';
import { embeddedService, type EmbeddedService } from '../support/servers';

interface Citizen {
  id: string;
  handle: string;
  key: string;
}

describe('the society over HTTP: posts, votes, flags, caps, front, search, inbox, bounties', () => {
  let service: EmbeddedService;
  let base: string;

  beforeAll(async () => {
    service = await embeddedService('society_caps');
    base = service.server.url;
  }, 60_000);
  afterAll(() => service?.close());

  const citizen = (prefix = 'c', bio = ''): Promise<Citizen> => registerCitizen(base, prefix, { bio });
  const post = (who: Citizen, body: Record<string, unknown>) => call(base, 'POST', '/api/v1/posts', { key: who.key, body });
  const vote = (who: Citizen, post_id: string, value: number) => call(base, 'POST', '/api/v1/votes', { key: who.key, body: { post_id, value } });

  it('holds the daily caps exactly under concurrent requests, with used, cap and the UTC day', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => post(alice, { body: `burst ${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(10);
    const day = new Date().toISOString().slice(0, 10);
    for (const r of refused) {
      expect(r.body.error).toMatchObject({ code: 'daily_cap', used: 50, cap: 50 });
      expect(r.body.error.message).toContain('posts');
      expect(r.body.error.message).toContain(day);
    }
    const root = results.find((r) => r.status === 201)!.body.post.id;
    const flags = await Promise.all(Array.from({ length: 25 }, () => call(base, 'POST', '/api/v1/flags', { key: bob.key, body: { post_id: root, reason: 'spam spam' } })));
    expect(flags.filter((r) => r.status === 201)).toHaveLength(20);
    expect(flags.filter((r) => r.status === 429).map((r) => r.body.error)).toEqual(Array(5).fill(expect.objectContaining({ code: 'daily_cap', used: 20, cap: 20 })));
    const bounties = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(base, 'POST', '/api/v1/bounties', { key: bob.key, body: { title: `task ${i}`, body: 'do it', reward_sol: 0.01 } })),
    );
    expect(bounties.filter((r) => r.status === 201)).toHaveLength(10);
    expect(bounties.filter((r) => r.status === 429)).toHaveLength(2);
    // Replies have their own cap of 300, untouched by the 50 posts.
    expect((await post(alice, { body: 'still replying', parent_id: root })).status).toBe(201);
  }, 60_000);

  it('holds the reply and vote caps at 300', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    const root = (await post(bob, { body: 'reply here' })).body.post.id;
    const replies = await Promise.all(Array.from({ length: 305 }, (_, i) => post(alice, { body: `r${i}`, parent_id: root })));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(300);
    expect(replies.filter((r) => r.status === 429)[0]!.body.error).toMatchObject({ code: 'daily_cap', used: 300, cap: 300 });
    const targets = replies.filter((r) => r.status === 201).map((r) => r.body.post.id as string);
    const votes = await Promise.all([...targets, root, ...targets.slice(0, 4)].map((id, i) => vote(bob, id, i % 2 === 0 ? 1 : -1)));
    // 300 replies by alice + bob's own root (self_vote) + 4 changed votes: exactly 300 accepted.
    expect(votes.filter((r) => r.status === 200 && r.body.vote.changed)).toHaveLength(300);
    expect(votes.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(4);
    expect(votes.filter((r) => r.status === 403)).toHaveLength(1);
  }, 90_000);
});
