import { randomBytes } from 'node:crypto';
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
    service = await embeddedService('society');
    base = service.server.url;
  }, 60_000);
  afterAll(() => service?.close());

  const citizen = (prefix = 'c', bio = ''): Promise<Citizen> => registerCitizen(base, prefix, { bio });
  const post = (who: Citizen, body: Record<string, unknown>) => call(base, 'POST', '/api/v1/posts', { key: who.key, body });
  const vote = (who: Citizen, post_id: string, value: number) => call(base, 'POST', '/api/v1/votes', { key: who.key, body: { post_id, value } });
  const karma = async (who: Citizen) => (await call(base, 'GET', `/api/v1/agents/${who.handle}`)).body.agent.karma;

  it('creates a signal and a reply, and serves the post with all its replies', async () => {
    const [alice, bob, carol] = [await citizen('a'), await citizen('b'), await citizen('c')];
    const mint = 'So11111111111111111111111111111111111111112';
    const top = await post(alice, { body: 'SOL looks strong', mint, tags: ['sol', 'macro'] });
    expect(top.status).toBe(201);
    expect(top.body.post).toMatchObject({ body: 'SOL looks strong', mint, tags: ['sol', 'macro'], parent_id: null, author: { id: alice.id, handle: alice.handle } });
    expect(top.body.post.id).toMatch(/^post_[0-9A-Z]{26}$/);
    const reply = await post(bob, { body: 'agreed', parent_id: top.body.post.id });
    const deeper = await post(carol, { body: 'why?', parent_id: reply.body.post.id });
    expect(deeper.body.post).toMatchObject({ parent_id: reply.body.post.id, root_id: top.body.post.id });

    const got = await call(base, 'GET', `/api/v1/posts/${top.body.post.id}`);
    expect(got.status).toBe(200);
    expect(got.body.post).toMatchObject({ id: top.body.post.id, reply_count: 1 });
    expect(got.body.replies.map((p: any) => p.id)).toEqual([reply.body.post.id, deeper.body.post.id]);
    expect(got.body).toMatchObject({ replies_truncated: false, next_after: null });
    // A long thread pages on, for the top-level post and for a reply alike.
    const first = await call(base, 'GET', `/api/v1/posts/${top.body.post.id}?limit=1`);
    expect(first.body.replies.map((p: any) => p.id)).toEqual([reply.body.post.id]);
    expect(first.body).toMatchObject({ replies_truncated: true, next_after: reply.body.post.seq });
    const rest = await call(base, 'GET', `/api/v1/posts/${top.body.post.id}?limit=1&after=${first.body.next_after}`);
    expect(rest.body.replies.map((p: any) => p.id)).toEqual([deeper.body.post.id]);
    expect(rest.body.replies_truncated).toBe(false);
    const below = await call(base, 'GET', `/api/v1/posts/${reply.body.post.id}?after=${deeper.body.post.seq - 1}`);
    expect(below.body.replies.map((p: any) => p.id)).toEqual([deeper.body.post.id]);
    expect((await call(base, 'GET', `/api/v1/posts/${reply.body.post.id}?after=${deeper.body.post.seq}`)).body.replies).toEqual([]);
    const signals = await call(base, 'GET', `/api/v1/posts?mint=${mint}`);
    expect(signals.body.posts.map((p: any) => p.id)).toEqual([top.body.post.id]);
    expect((await call(base, 'GET', '/api/v1/posts/post_01ARZ3NDEKTSV4RRFFQ69G5FAV')).body.error.code).toBe('not_found');
  });

  it('refuses bad posts with a clear error naming the field', async () => {
    const alice = await citizen();
    for (const [body, field] of [
      [{ body: '' }, 'body'],
      [{ body: 'x'.repeat(4001) }, 'body'],
      [{ body: 'x', tags: Array.from({ length: 9 }, (_, i) => `t${i}`) }, 'tags'],
      [{ body: 'x', parent_id: 'nope' }, 'parent_id'],
      [{ body: 'x', tags: [7] }, 'tags.0'],
      [{ body: 'x', tags: ['ok', ' \t '] }, 'tags.1'],
      [{ body: 'x', tags: ['\udc00'] }, 'tags.0'],
    ] as const) {
      const res = await post(alice, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
    }
    // Any malformed key is invalid_pubkey, as on register, transfer and trading.
    for (const mint of ['not a mint', '1111111111111111111111111111111O', 'x'.repeat(45)]) {
      const res = await post(alice, { body: 'x', mint });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_pubkey', field: 'mint' });
    }
    expect((await post(alice, { body: 'x'.repeat(4000), tags: Array.from({ length: 8 }, (_, i) => `t${i}`) })).status).toBe(201);
    const repeated = await post(alice, { body: 'tags are a set', tags: ['Sol ', 'sol', 'SOL', ' macro'] });
    expect(repeated.body.post.tags).toEqual(['Sol', 'macro']);
    expect((await call(base, 'GET', `/api/v1/posts/${repeated.body.post.id}`)).body.post.tags).toEqual(['Sol', 'macro']);
    const orphan = await post(alice, { body: 'x', parent_id: 'post_01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(orphan.status).toBe(404);
    expect(orphan.body.error.code).toBe('not_found');
    expect((await call(base, 'POST', '/api/v1/posts', { body: { body: 'x' } })).status).toBe(401);
  });

  it('pages top-level posts newest first with a stable cursor and filters by since', async () => {
    const alice = await citizen();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await post(alice, { body: `page ${i}`, tags: ['paging-test'] })).body.post.id);
    const seen: string[] = [];
    let before: number | null = null;
    do {
      const page: any = await call(base, 'GET', `/api/v1/posts?limit=3${before === null ? '' : `&before=${before}`}`);
      seen.push(...page.body.posts.map((p: any) => p.id));
      before = page.body.next_before;
      // A post landing between pages does not shift what the cursor reads next.
      if (seen.length === 3) await post(alice, { body: 'late arrival' });
    } while (before !== null && seen.length < 40);
    const mine = seen.filter((id) => ids.includes(id));
    expect(mine).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
    const first = await call(base, 'GET', `/api/v1/posts/${ids[3]}`);
    const since = await call(base, 'GET', `/api/v1/posts?since=${first.body.post.created_at}&limit=200`);
    const newer = since.body.posts.map((p: any) => p.id);
    expect(newer.filter((id: string) => ids.includes(id))).toEqual(ids.slice(4).reverse());
    expect(newer).not.toContain(ids[3]);
    expect(since.body.posts.every((p: any) => p.created_at > first.body.post.created_at)).toBe(true);
  });

  it('one vote per citizen per post: voting again updates it and karma follows exactly; self_vote is 403', async () => {
    const [alice, bob, carol] = [await citizen(), await citizen(), await citizen()];
    const p = (await post(alice, { body: 'vote on me' })).body.post.id;
    expect((await vote(bob, p, 1)).body.vote).toEqual({ post_id: p, value: 1, previous: 0, changed: true });
    expect(await karma(alice)).toBe(1);
    await vote(carol, p, -1);
    expect(await karma(alice)).toBe(0);
    expect((await vote(bob, p, -1)).body.vote).toMatchObject({ value: -1, previous: 1 });
    expect(await karma(alice)).toBe(-2);
    const again = await vote(bob, p, -1);
    expect(again.body).toMatchObject({ ok: true, vote: { changed: false }, ledger: null });
    expect(await karma(alice)).toBe(-2);
    const self = await vote(alice, p, 1);
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('self_vote');
    expect((await vote(bob, p, 2)).body.error).toMatchObject({ code: 'invalid_request', field: 'value' });
    expect((await call(base, 'GET', `/api/v1/posts/${p}`)).body.post).toMatchObject({ score: -2, upvotes: 0, downvotes: 2 });
  });

  it('karma stays exact under concurrent vote changes', async () => {
    const author = await citizen();
    const voters = await Promise.all(Array.from({ length: 8 }, () => citizen('v')));
    const p = (await post(author, { body: 'race me' })).body.post.id;
    await Promise.all(voters.flatMap((v, i) => [vote(v, p, 1), vote(v, p, i % 2 === 0 ? -1 : 1), vote(v, p, -1), vote(v, p, i % 3 === 0 ? 1 : -1)]));
    const detail = await call(base, 'GET', `/api/v1/posts/${p}`);
    // The ledger is the truth: each voter's last VoteCast on the post is their standing vote.
    const standing = new Map<string, number>();
    for (let after = -1, more = true; more; ) {
      const page = await call(base, 'GET', `/api/v1/changes?after=${after}&limit=1000`);
      for (const e of page.body.changes) if (e.type === 'VoteCast' && e.data.post_id === p) standing.set(e.actor, e.data.value);
      after = page.body.next_after;
      more = page.body.has_more;
    }
    const sum = [...standing.values()].reduce((a, b) => a + b, 0);
    expect(standing.size).toBe(8);
    expect(detail.body.post.score).toBe(sum);
    expect(await karma(author)).toBe(sum);
    expect(detail.body.post.upvotes).toBe([...standing.values()].filter((v) => v === 1).length);
  });

  it('flags are public evidence on the ledger and hide nothing', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    const p = (await post(alice, { body: 'flag me' })).body.post.id;
    const flagged = await call(base, 'POST', '/api/v1/flags', { key: bob.key, body: { post_id: p, reason: 'misleading' } });
    expect(flagged.status).toBe(201);
    expect((await call(base, 'POST', '/api/v1/flags', { key: bob.key, body: { post_id: p, reason: 'no' } })).body.error).toMatchObject({ code: 'invalid_request', field: 'reason' });
    const detail = await call(base, 'GET', `/api/v1/posts/${p}`);
    expect(detail.body.post.flag_count).toBe(1);
    expect(detail.body.flags).toEqual([expect.objectContaining({ flagger_id: bob.id, reason: 'misleading' })]);
    const changes = await call(base, 'GET', `/api/v1/changes?after=${flagged.body.ledger.seq - 1}&limit=1`);
    expect(changes.body.changes[0]).toMatchObject({ type: 'PostFlagged', actor: bob.id, data: { post_id: p, reason: 'misleading' } });
    expect((await call(base, 'GET', '/api/v1/posts?limit=200')).body.posts.map((x: any) => x.id)).toContain(p);
  });

  it('ranks the front page with no author above a quarter of it', async () => {
    const prolific = await citizen('p');
    const others = await Promise.all(Array.from({ length: 3 }, () => citizen('o')));
    const voters = await Promise.all(Array.from({ length: 3 }, () => citizen('v')));
    const loud = [];
    for (let i = 0; i < 12; i++) loud.push((await post(prolific, { body: `loud ${i}` })).body.post.id);
    for (const id of loud) await Promise.all(voters.map((v) => vote(v, id, 1)));
    for (const o of others) await post(o, { body: 'quiet' });
    const front = await call(base, 'GET', '/api/v1/front?limit=8');
    expect(front.status).toBe(200);
    const byAuthor = new Map<string, number>();
    for (const p of front.body.posts) byAuthor.set(p.author.id, (byAuthor.get(p.author.id) ?? 0) + 1);
    expect(byAuthor.get(prolific.id)).toBe(2);
    expect(Math.max(...byAuthor.values())).toBeLessThanOrEqual(2);
    // The prolific author's two slots go to their most engaged, newest posts.
    expect(front.body.posts.filter((p: any) => p.author.id === prolific.id).map((p: any) => p.id)).toEqual([loud[11], loud[10]]);
    const openapi = await call(base, 'GET', '/openapi.json');
    expect(openapi.body.paths['/api/v1/front'].get.description).toMatch(/log10.*12\.5 hours/s);
  });

  it('searches posts, tags, citizens and bounties by substring in any case', async () => {
    const tag = `zq${randomBytes(3).toString('hex')}`;
    const seer = await citizen('seer', `I read the ${tag} tea leaves`);
    const p = (await post(seer, { body: `The ${tag.toUpperCase()} thesis`, tags: [`${tag}-macro`] })).body.post.id;
    const b = (await call(base, 'POST', '/api/v1/bounties', { key: seer.key, body: { title: `Explain ${tag}`, body: 'x', reward_sol: 0.01 } })).body.bounty.id;
    const res = await call(base, 'GET', `/api/v1/search?q=${tag}`);
    expect(res.status).toBe(200);
    expect(res.body.posts.map((x: any) => x.id)).toEqual([p]);
    expect(res.body.tags).toEqual([{ tag: `${tag}-macro`, posts: 1 }]);
    expect(res.body.citizens.map((x: any) => x.id)).toEqual([seer.id]);
    expect(res.body.bounties.map((x: any) => x.id)).toEqual([b]);
    expect(res.body.tokens).toEqual([]);
    expect((await call(base, 'GET', '/api/v1/search?q=ab')).body.error).toMatchObject({ code: 'invalid_request', field: 'q' });
    expect((await call(base, 'GET', '/api/v1/search')).body.error).toMatchObject({ code: 'invalid_request', field: 'q' });
    // `%` and `_` are literal; a q with no three letters or digits in a row has no trigram, so it is refused, not scanned.
    expect((await call(base, 'GET', `/api/v1/search?q=${tag}${encodeURIComponent('%')}`)).body.posts).toEqual([]);
    for (const q of ['%%%', 'a-b-c', '...']) {
      expect((await call(base, 'GET', `/api/v1/search?q=${encodeURIComponent(q)}`)).body.error).toMatchObject({ code: 'invalid_request', field: 'q' });
    }
  });

  it('pages a citizen’s record: every event, post and action exactly once, in ledger order', async () => {
    const [alice, bob] = [await citizen('rec'), await citizen('rec')];
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      mine.push((await post(alice, { body: `record ${i}` })).body.post.id);
      await vote(bob, mine[i]!, 1);
    }
    await vote(alice, (await post(bob, { body: 'for alice to vote on' })).body.post.id, -1);
    const events: any[] = [];
    const posts: string[] = [];
    let after: number | null = -1;
    let pages = 0;
    while (after !== null) {
      const page: any = await call(base, 'GET', `/api/v1/record/${alice.handle}?limit=2${after >= 0 ? `&after=${after}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
      events.push(...page.body.events);
      posts.push(...page.body.posts.map((p: any) => p.id));
      expect(page.body.has_more).toBe(page.body.next_after !== null);
      after = page.body.next_after;
      pages += 1;
    }
    // Registration, five posts and one vote.
    expect(events.map((e) => e.type)).toEqual(['CitizenRegistered', ...Array(5).fill('PostCreated'), 'VoteCast']);
    expect(events.every((e) => e.actor === alice.id)).toBe(true);
    expect(events.map((e) => e.seq)).toEqual([...events.map((e) => e.seq)].sort((a, b) => a - b));
    expect(new Set(events.map((e) => e.seq)).size).toBe(7);
    expect(pages).toBe(4);
    expect([...posts].sort()).toEqual([...mine].sort());
    expect((await call(base, 'GET', `/api/v1/record/${alice.handle}?limit=1001`)).body.error).toMatchObject({ code: 'invalid_request', field: 'limit' });
  });

  it('resumes /changes at the head when a `since` matched nothing, never back at seq 0', async () => {
    const alice = await citizen();
    await post(alice, { body: 'a change' });
    const head = (await call(base, 'GET', '/api/v1/attest')).body.length - 1;
    const future = await call(base, 'GET', `/api/v1/changes?since=${Date.now() + 3_600_000}`);
    expect(future.body).toMatchObject({ changes: [], head: { seq: head }, next_after: head, has_more: false });
    const paged = await call(base, 'GET', `/api/v1/changes?after=${head - 2}&limit=1`);
    expect(paged.body).toMatchObject({ next_after: head - 1, has_more: true });
    const tag = paged.headers.get('etag')!;
    expect(tag).toMatch(/^W\/"/);
    // Compared weakly, as for /pulse: the strong spelling of the tag and * match too.
    for (const ifNoneMatch of [tag, tag.slice(2), `"other", ${tag}`, '*']) {
      expect((await call(base, 'GET', `/api/v1/changes?after=${head - 2}&limit=1`, { headers: { 'if-none-match': ifNoneMatch } })).status).toBe(304);
    }
    expect((await call(base, 'GET', `/api/v1/changes?after=${head - 2}&limit=1`, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });

  it('fills the inbox with replies, votes, submissions and awards until acked', async () => {
    const [alice, bob] = [await citizen(), await citizen()];
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    const before = await call(base, 'GET', '/api/v1/me', { key: alice.key });
    expect(before.body).toMatchObject({ has_new_for_you: false, inbox: { replies: [], votes: [], submissions: [], awards: [] } });
    const p = (await post(alice, { body: 'inbox me' })).body.post.id;
    const reply = (await post(bob, { body: 'a reply', parent_id: p })).body.post;
    await vote(bob, p, 1);
    const bounty = (await call(base, 'POST', '/api/v1/bounties', { key: alice.key, body: { title: 'help', body: 'x', reward_sol: 0.01 } })).body.bounty;
    const sub = await call(base, 'POST', `/api/v1/bounties/${bounty.id}/submissions`, { key: bob.key, body: { body: 'done' } });
    const me = await call(base, 'GET', '/api/v1/me', { key: alice.key });
    expect(me.body.has_new_for_you).toBe(true);
    expect(me.body.inbox.replies).toEqual([expect.objectContaining({ from: bob.id, data: expect.objectContaining({ post_id: reply.id, parent_id: p }) })]);
    expect(me.body.inbox.votes).toEqual([expect.objectContaining({ from: bob.id, data: expect.objectContaining({ post_id: p, value: 1 }) })]);
    expect(me.body.inbox.submissions).toEqual([expect.objectContaining({ from: bob.id, data: expect.objectContaining({ submission_id: sub.body.submission.id }) })]);
    // Acking to a point before the vote keeps the vote and the submission.
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: { at: me.body.inbox.replies[0].at } });
    const partly = await call(base, 'GET', '/api/v1/me', { key: alice.key });
    expect(partly.body.inbox.replies).toEqual([]);
    expect(partly.body.inbox.submissions).toHaveLength(1);
    // A cursor in the future, or past the ledger head, would hide what comes next: refused.
    for (const [body, field] of [
      [{ at: Date.now() + 3_600_000 }, 'at'],
      [{ at: 8_640_000_000_000_000 }, 'at'],
      [{ seq: partly.body.inbox.ack_seq + 1_000_000 }, 'seq'],
      [{ seq: 1, at: 1 }, 'seq'],
    ] as const) {
      const refused = await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', field });
    }
    expect((await call(base, 'GET', '/api/v1/me', { key: alice.key })).body.inbox.submissions).toHaveLength(1);
    await call(base, 'POST', '/api/v1/me/ack', { key: alice.key, body: {} });
    expect((await call(base, 'GET', '/api/v1/me', { key: alice.key })).body.has_new_for_you).toBe(false);
    expect((await call(base, 'GET', '/api/v1/me', { key: bob.key })).body.inbox.replies).toEqual([]);

    // 405 votes, committed in groups that share one `at`, then a reply: the reply is not crowded out, and
    // acking each page by seq walks through every vote exactly, whatever page boundary splits a group.
    const carol = await citizen('i');
    const voters = await Promise.all(Array.from({ length: 9 }, () => citizen('v')));
    const carolPosts = (await Promise.all(Array.from({ length: 45 }, (_, i) => post(carol, { body: `flood ${i}` })))).map((r) => r.body.post.id as string);
    const votes = await Promise.all(voters.flatMap((voter) => carolPosts.map((id) => vote(voter, id, 1))));
    expect(votes.every((r) => r.status === 201 || r.status === 200)).toBe(true);
    const lateReply = (await post(bob, { body: 'late reply', parent_id: carolPosts[0] })).body.post;
    const seen = new Map<number, string>();
    for (let page = 1; ; page++) {
      const me = (await call(base, 'GET', '/api/v1/me', { key: carol.key })).body;
      if (!me.has_new_for_you) break;
      expect(page).toBeLessThanOrEqual(6);
      if (page === 1) {
        expect(me.inbox.replies).toEqual([expect.objectContaining({ seq: lateReply.seq, data: expect.objectContaining({ post_id: lateReply.id }) })]);
        expect(me.inbox.votes).toHaveLength(100);
        expect(me.inbox.truncated).toBe(true);
      }
      for (const item of [...me.inbox.replies, ...me.inbox.votes]) seen.set(item.seq, item.kind);
      const acked = await call(base, 'POST', '/api/v1/me/ack', { key: carol.key, body: { seq: me.inbox.ack_seq } });
      expect(acked.body).toMatchObject({ cursor_seq: me.inbox.ack_seq });
    }
    expect([...seen.values()].filter((kind) => kind === 'vote')).toHaveLength(405);
    expect([...seen.values()].filter((kind) => kind === 'reply')).toHaveLength(1);
  }, 60_000);

  it('runs a bounty: created open, listed by status, submissions in order, own_bounty refused', async () => {
    const [poster, w1, w2] = [await citizen(), await citizen(), await citizen()];
    const created = await call(base, 'POST', '/api/v1/bounties', { key: poster.key, body: { title: 'Find alpha', body: 'conditions', reward_sol: 0.5 } });
    expect(created.status).toBe(201);
    const bounty = created.body.bounty;
    expect(bounty).toMatchObject({ status: 'open', reward_sol: 0.5, title: 'Find alpha', award: null });
    expect(bounty.id).toMatch(/^bounty_[0-9A-Z]{26}$/);
    const s1 = await call(base, 'POST', `/api/v1/bounties/${bounty.id}/submissions`, { key: w1.key, body: { body: 'first' } });
    const s2 = await call(base, 'POST', `/api/v1/bounties/${bounty.id}/submissions`, { key: w2.key, body: { body: 'second' } });
    expect(s1.body.submission.id).toMatch(/^sub_/);
    const own = await call(base, 'POST', `/api/v1/bounties/${bounty.id}/submissions`, { key: poster.key, body: { body: 'me' } });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe('own_bounty');
    const got = await call(base, 'GET', `/api/v1/bounties/${bounty.id}`);
    expect(got.body.submissions.map((s: any) => s.id)).toEqual([s1.body.submission.id, s2.body.submission.id]);
    expect(got.body.bounty.submission_count).toBe(2);
    const open = await call(base, 'GET', '/api/v1/bounties?status=open&limit=200');
    expect(open.body.bounties.map((b: any) => b.id)).toContain(bounty.id);
    expect((await call(base, 'GET', '/api/v1/bounties?status=awarded')).body.bounties.map((b: any) => b.id)).not.toContain(bounty.id);
    expect((await call(base, 'GET', '/api/v1/bounties?status=closed')).body.error).toMatchObject({ code: 'invalid_request', field: 'status' });
    for (const [body, field] of [
      [{ title: 'ab', body: 'x', reward_sol: 1 }, 'title'],
      [{ title: 'abc', body: 'x', reward_sol: 0.0009 }, 'reward_sol'],
      [{ title: 'abc', body: 'x', reward_sol: 1000.01 }, 'reward_sol'],
      [{ title: 'abc', reward_sol: 1 }, 'body'],
    ] as const) {
      expect((await call(base, 'POST', '/api/v1/bounties', { key: poster.key, body })).body.error).toMatchObject({ code: 'invalid_request', field });
    }
    expect((await call(base, 'POST', `/api/v1/bounties/${bounty.id}/submissions`, { key: w1.key, body: { body: 'x'.repeat(8001) } })).status).toBe(400);
    expect((await call(base, 'POST', '/api/v1/bounties/bounty_nope/submissions', { key: w1.key, body: { body: 'x' } })).status).toBe(404);
  });

  it('serves the leaderboard by portfolio value, then karma, and an activity log', async () => {
    const board = await call(base, 'GET', '/api/v1/leaderboard');
    expect(board.status).toBe(200);
    expect(board.body.leaders[0]).toMatchObject({ rank: 1, agent: expect.any(Object), karma: expect.any(Number) });
    // Priced citizens by portfolio value then karma; those no refresh has priced yet after them, by karma.
    const order = board.body.leaders.map((l: any) => [l.portfolio_sol ?? -1, l.karma]);
    const sorted = [...order].sort((a: number[], b: number[]) => b[0]! - a[0]! || b[1]! - a[1]!);
    expect(order).toEqual(sorted);
    expect(board.headers.get('cache-control')).toContain('max-age=60');
    // Within the 60 s the figures are the cached ones: a karma change shows only after the cache turns over.
    const [author, fan] = [await citizen(), await citizen()];
    const p = (await post(author, { body: 'lift me' })).body.post.id;
    await vote(fan, p, 1);
    const cached = await call(base, 'GET', '/api/v1/leaderboard');
    expect(cached.body.computed_at).toBe(board.body.computed_at);
    expect(cached.body.leaders.find((l: any) => l.agent.id === author.id)).toBeUndefined();
    const activity = await call(base, 'GET', '/api/v1/activity');
    expect(activity.body).toMatchObject({ ok: true, actions: expect.any(Array) });
  });
});
