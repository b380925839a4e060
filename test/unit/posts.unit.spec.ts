import { DAILY_CAPS, ledgerModel } from '@svc/domain';
import { GivenLedger } from '../support/ledgerModel';

const NOON = Date.UTC(2026, 10, 22, 12, 0, 0);
const NEXT_DAY = Date.UTC(2026, 10, 23, 0, 0, 0);

describe('posts and replies', () => {
  it('a top-level post carries no parent, root or parent author', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const decision = given.decide({ type: 'CreatePost', agentId: alice, data: { post_id: 'post_1', body: 'gm', mint: 'M', parent_id: null, tags: ['a'] } });
    expect(decision).toEqual({
      ok: true,
      events: [{ type: 'PostCreated', actor: alice, data: { post_id: 'post_1', body: 'gm', mint: 'M', parent_id: null, root_id: null, parent_author_id: null, tags: ['a'] } }],
    });
  });

  it('a reply to a reply names the thread root and the parent author', () => {
    const given = new GivenLedger(NOON);
    const [alice, bob, carol] = [given.citizen(1), given.citizen(2), given.citizen(3)];
    given.post(alice, 'post_1');
    given.post(bob, 'post_2', 'post_1');
    const decision = given.decide({ type: 'CreatePost', agentId: carol, data: { post_id: 'post_3', body: 'x', mint: null, parent_id: 'post_2', tags: [] } });
    expect(decision).toMatchObject({ ok: true, events: [{ data: { parent_id: 'post_2', root_id: 'post_1', parent_author_id: bob } }] });
  });

  it('keeps tags as a set: trimmed, each once whatever its case, in the order first given', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const decision = given.decide({ type: 'CreatePost', agentId: alice, data: { post_id: 'post_1', body: 'gm', mint: null, parent_id: null, tags: [' Alpha', 'sol', 'alpha ', 'SOL', 'beta'] } });
    expect(decision).toMatchObject({ ok: true, events: [{ data: { tags: ['Alpha', 'sol', 'beta'] } }] });
  });

  it('refuses a blank tag, naming it', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const decision = given.decide({ type: 'CreatePost', agentId: alice, data: { post_id: 'post_1', body: 'gm', mint: null, parent_id: null, tags: ['ok', '   '] } });
    expect(decision).toEqual({ ok: false, rejection: { code: 'invalid_request', message: 'tags.1 is blank', details: { field: 'tags.1' } } });
  });

  it('refuses a reply whose parent does not exist', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    const decision = given.decide({ type: 'CreatePost', agentId: alice, data: { post_id: 'post_9', body: 'x', mint: null, parent_id: 'post_missing', tags: [] } });
    expect(decision).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
  });
});

describe('votes and karma', () => {
  it('refuses a vote on your own post with self_vote', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    given.post(alice, 'post_1');
    expect(given.decide({ type: 'CastVote', agentId: alice, data: { post_id: 'post_1', value: 1 } })).toMatchObject({ ok: false, rejection: { code: 'self_vote' } });
  });

  it('refuses a vote on a post that does not exist', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    expect(given.decide({ type: 'CastVote', agentId: alice, data: { post_id: 'post_x', value: 1 } })).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
  });

  it('records the previous vote, so karma moves by exactly value - previous', () => {
    const given = new GivenLedger(NOON);
    const [alice, bob] = [given.citizen(1), given.citizen(2)];
    given.post(alice, 'post_1');
    const [first] = given.accept({ type: 'CastVote', agentId: bob, data: { post_id: 'post_1', value: 1 } });
    expect(first!.data).toEqual({ post_id: 'post_1', author_id: alice, value: 1, previous: 0 });
    const [second] = given.accept({ type: 'CastVote', agentId: bob, data: { post_id: 'post_1', value: -1 } });
    expect(second!.data).toEqual({ post_id: 'post_1', author_id: alice, value: -1, previous: 1 });
  });

  it('the same vote again writes nothing and uses no cap', () => {
    const given = new GivenLedger(NOON);
    const [alice, bob] = [given.citizen(1), given.citizen(2)];
    given.post(alice, 'post_1');
    given.accept({ type: 'CastVote', agentId: bob, data: { post_id: 'post_1', value: 1 } });
    expect(given.decide({ type: 'CastVote', agentId: bob, data: { post_id: 'post_1', value: 1 } })).toEqual({ ok: true, events: [] });
  });
});

describe('flags', () => {
  it('records a flag with the post author, and refuses an unknown post', () => {
    const given = new GivenLedger(NOON);
    const [alice, bob] = [given.citizen(1), given.citizen(2)];
    given.post(alice, 'post_1');
    expect(given.decide({ type: 'FlagPost', agentId: bob, data: { post_id: 'post_1', reason: 'spam link' } })).toEqual({
      ok: true,
      events: [{ type: 'PostFlagged', actor: bob, data: { post_id: 'post_1', author_id: alice, reason: 'spam link' } }],
    });
    expect(given.decide({ type: 'FlagPost', agentId: bob, data: { post_id: 'post_2', reason: 'spam' } })).toMatchObject({ ok: false, rejection: { code: 'not_found' } });
  });
});

describe('daily caps, per UTC day at the ledger head', () => {
  it.each([
    ['posts', DAILY_CAPS.posts],
    ['replies', DAILY_CAPS.replies],
  ] as const)('allows exactly %s = %i and refuses the next with used and cap, naming the day', (cap, limit) => {
    const given = new GivenLedger(NOON);
    const [alice, bob] = [given.citizen(1), given.citizen(2)];
    given.post(bob, 'post_root');
    const create = (i: number) => ({
      type: 'CreatePost' as const,
      agentId: alice,
      data: { post_id: `post_${cap}_${i}`, body: 'x', mint: null, parent_id: cap === 'replies' ? 'post_root' : null, tags: [] },
    });
    for (let i = 0; i < limit; i++) given.accept(create(i));
    const refused = given.decide(create(limit));
    expect(refused).toEqual({
      ok: false,
      rejection: { code: 'daily_cap', message: expect.stringContaining('2026-11-22'), details: { used: limit, cap: limit, day: '2026-11-22' } },
    });
    expect(refused.ok || refused.rejection.message).toContain(cap);
    // A new UTC day starts a new count.
    expect(given.decide(create(limit), NEXT_DAY)).toMatchObject({ ok: true });
  });

  it('counts posts and replies separately', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    for (let i = 0; i < DAILY_CAPS.posts; i++) given.post(alice, `post_${i}`);
    expect(given.decide({ type: 'CreatePost', agentId: alice, data: { post_id: 'post_r', body: 'x', mint: null, parent_id: 'post_0', tags: [] } })).toMatchObject({ ok: true });
  });

  it('caps votes at 300 and flags at 20 per day', () => {
    const given = new GivenLedger(NOON);
    const [alice, bob] = [given.citizen(1), given.citizen(2)];
    given.post(alice, 'post_root');
    for (let i = 0; i < 310; i++) given.accept({ type: 'CreatePost', agentId: alice, data: { post_id: `post_${i}`, body: 'x', mint: null, parent_id: 'post_root', tags: [] } }, NOON - 86_400_000 * (1 + Math.floor(i / 300)));
    for (let i = 0; i < DAILY_CAPS.votes; i++) given.accept({ type: 'CastVote', agentId: bob, data: { post_id: `post_${i}`, value: 1 } });
    expect(given.decide({ type: 'CastVote', agentId: bob, data: { post_id: 'post_305', value: 1 } })).toMatchObject({
      ok: false,
      rejection: { code: 'daily_cap', details: { used: 300, cap: 300 } },
    });
    for (let i = 0; i < DAILY_CAPS.flags; i++) given.accept({ type: 'FlagPost', agentId: bob, data: { post_id: 'post_root', reason: 'why' } });
    expect(given.decide({ type: 'FlagPost', agentId: bob, data: { post_id: 'post_root', reason: 'why' } })).toMatchObject({
      ok: false,
      rejection: { code: 'daily_cap', details: { used: 20, cap: 20 } },
    });
  });

  it('survives a snapshot: the restored state refuses exactly where the live one does', () => {
    const given = new GivenLedger(NOON);
    const alice = given.citizen(1);
    for (let i = 0; i < DAILY_CAPS.posts; i++) given.post(alice, `post_${i}`);
    const restored = ledgerModel.restore(JSON.parse(JSON.stringify(ledgerModel.snapshot(given.state))));
    const command = { type: 'CreatePost' as const, agentId: alice, data: { post_id: 'post_more', body: 'x', mint: null, parent_id: null, tags: [] } };
    expect(ledgerModel.decide(command, restored, NOON)).toMatchObject({ ok: false, rejection: { code: 'daily_cap' } });
    expect(ledgerModel.decide({ type: 'CastVote', agentId: 'agent_2', data: { post_id: 'post_3', value: 1 } }, restored, NOON)).toMatchObject({ ok: true });
  });
});
