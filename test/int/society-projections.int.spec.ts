import { sql } from 'kysely';
import { ledgerModel, type LedgerCommand, type LedgerState } from '@svc/domain';
import { LEDGER_STREAM, LedgerWriter, PostgresEventStore, type LedgerEntry } from '@svc/ledger';
import { Projector, bounties, handles, inbox, posts, projections, search, rebuildReadModels } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';
import { executeInOrder, registerCitizenCommand } from '../support/ledgerModel';

const TABLES = ['agents', 'posts', 'post_tags', 'tags', 'votes', 'flags', 'bounties', 'submissions', 'actions', 'inbox', 'search_docs'];

async function dump(database: SqlDatabase, schema: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) out[table] = (await sql.raw(`select * from ${schema}.${table} order by 1, 2`).execute(database.db)).rows;
  return out;
}

const register = (n: number) => registerCitizenCommand(n, `h${n}`, { bio: n === 3 ? 'Quant Whisperer' : '' });
const post = (author: number, id: string, parent: string | null = null, tags: string[] = []): LedgerCommand => ({
  type: 'CreatePost',
  agentId: `agent_${author}`,
  data: { post_id: id, body: `about ${id}: the Moon signal`, mint: parent ? null : 'MintA', parent_id: parent, tags },
});
const vote = (voter: number, id: string, value: 1 | -1): LedgerCommand => ({ type: 'CastVote', agentId: `agent_${voter}`, data: { post_id: id, value } });

describe('society read models', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;
  let store: PostgresEventStore;
  let written: LedgerEntry[];

  beforeAll(async () => {
    db = await freshDatabase('society_rm');
    database = await openDatabase({ url: db.url, dataDir: tempDir('society-rm') });
    store = await new PostgresEventStore(database).init();
    const writer = new LedgerWriter<LedgerState, LedgerCommand>(store, ledgerModel);
    await writer.start();
    const commands: LedgerCommand[] = [
      register(1),
      register(2),
      register(3),
      post(1, 'post_a', null, ['Alpha', 'alpha', 'sol']),
      post(2, 'post_b', null, ['beta']),
      post(2, 'post_a1', 'post_a'),
      post(3, 'post_a2', 'post_a1'),
      post(1, 'post_self', 'post_a'),
      vote(2, 'post_a', 1),
      vote(3, 'post_a', 1),
      vote(3, 'post_a', -1),
      vote(3, 'post_a', 1),
      vote(1, 'post_b', -1),
      vote(3, 'post_b', -1),
      { type: 'FlagPost', agentId: 'agent_3', data: { post_id: 'post_b', reason: 'looks like a pump' } },
      { type: 'FlagPost', agentId: 'agent_1', data: { post_id: 'post_b', reason: 'agreed' } },
      { type: 'PostBounty', agentId: 'agent_1', data: { bounty_id: 'bounty_1', title: 'Find the moonshot', body: 'rules', reward_sol: 0.25, mint: null } },
      { type: 'SubmitWork', agentId: 'agent_2', data: { bounty_id: 'bounty_1', submission_id: 'sub_1', body: 'here' } },
      { type: 'SubmitWork', agentId: 'agent_3', data: { bounty_id: 'bounty_1', submission_id: 'sub_2', body: 'mine' } },
      { type: 'AwardBounty', agentId: 'agent_1', data: { bounty_id: 'bounty_1', submission_id: 'sub_2', signature: 'SIG_award' } },
    ];
    await executeInOrder(writer, commands);
    written = (await store.readForward(LEDGER_STREAM, 0, 1000)).map((e) => JSON.parse(e.data) as LedgerEntry);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await db?.drop();
  });

  it('applies every projection twice with the same rows as once', async () => {
    const projector = await new Projector({ database, store, projections, schema: 'rm' }).init();
    const batch = await store.readForward(LEDGER_STREAM, 0, 1000);
    await projector.applyBatch(batch);
    const once = await dump(database, 'rm');
    const parsed = batch.map((e) => ({ entry: JSON.parse(e.data) as LedgerEntry, bytes: e.data }));
    await database.db.transaction().execute(async (trx) => {
      for (const projection of projections) {
        const mine = parsed.filter((p) => handles(projection, p.entry.type));
        if (mine.length > 0) await projection.apply(trx, 'rm', mine);
      }
    });
    expect(await dump(database, 'rm')).toEqual(once);
  });

  it('keeps karma, scores, replies and flags exact', async () => {
    const { db: kdb } = database;
    const karma = await sql<{ agent_id: string; karma: number }>`select agent_id, karma from rm.agents order by agent_id`.execute(kdb);
    // post_a: +1 (agent_2) +1 (agent_3, after changing twice); post_b: -1 -1.
    expect(karma.rows).toEqual([
      { agent_id: 'agent_1', karma: 2 },
      { agent_id: 'agent_2', karma: -2 },
      { agent_id: 'agent_3', karma: 0 },
    ]);
    const a = await posts.findPost(kdb, 'rm', 'post_a');
    expect(a).toMatchObject({ score: 2, upvotes: 2, downvotes: 0, reply_count: 2, flag_count: 0, tags: ['Alpha', 'sol'], mint: 'MintA', author: { handle: 'h1' } });
    const b = await posts.findPost(kdb, 'rm', 'post_b');
    expect(b).toMatchObject({ score: -2, flag_count: 2 });
    expect((await posts.flagsOf(kdb, 'rm', 'post_b')).map((f) => f.reason)).toEqual(['looks like a pump', 'agreed']);
    expect((await posts.repliesOf(kdb, 'rm', a!, 100)).map((p) => p.id)).toEqual(['post_a1', 'post_a2', 'post_self']);
    const a1 = await posts.findPost(kdb, 'rm', 'post_a1');
    expect((await posts.repliesOf(kdb, 'rm', a1!, 100)).map((p) => p.id)).toEqual(['post_a2']);
    expect((await posts.listTopPosts(kdb, 'rm', { limit: 10 })).map((p) => p.id)).toEqual(['post_b', 'post_a']);
    expect((await posts.listTopPosts(kdb, 'rm', { limit: 10, mint: 'MintA', beforeSeq: b!.seq })).map((p) => p.id)).toEqual(['post_a']);
  });

  it('ranks the front page by decayed engagement', async () => {
    const front = await posts.frontPage(database.db, 'rm', 4);
    // One slot per author at limit 4; post_a has engagement, post_b is negative.
    expect(front.map((p) => p.id)).toEqual(['post_a', 'post_b']);
    const hot = await sql<{ post_id: string; hot: number; created_at: string }>`select post_id, hot, created_at from rm.posts where parent_id is null order by post_id`.execute(database.db);
    const at = (id: string) => Number(hot.rows.find((r) => r.post_id === id)!.created_at);
    const hotOf = (id: string) => Number(hot.rows.find((r) => r.post_id === id)!.hot);
    // post_a: 2 net votes + 1 reply by another citizen (its author's own reply does not count): s = 3.
    expect(hotOf('post_a')).toBeCloseTo(Math.log10(3) + at('post_a') / 45_000_000, 9);
    // post_b: 2 downvotes, no replies: s = -2.
    expect(hotOf('post_b')).toBeCloseTo(-Math.log10(2) + at('post_b') / 45_000_000, 9);
  });

  it('fills each inbox with replies, votes, submissions and awards, never the actor’s own', async () => {
    const one = await inbox.inboxSince(database.db, 'rm', 'agent_1', 0, 100);
    expect(one.reply.map((i) => i.data.post_id)).toEqual(['post_a1']);
    expect(one.vote.map((i) => [i.from, i.data.value])).toEqual([
      ['agent_2', 1],
      ['agent_3', 1],
      ['agent_3', -1],
      ['agent_3', 1],
    ]);
    expect(one.submission.map((i) => i.data.submission_id)).toEqual(['sub_1', 'sub_2']);
    const three = await inbox.inboxSince(database.db, 'rm', 'agent_3', 0, 100);
    expect(three.award).toEqual([expect.objectContaining({ from: 'agent_1', data: expect.objectContaining({ signature: 'SIG_award', reward_sol: 0.25 }) })]);
    const last = written[written.length - 1]!;
    expect(await inbox.hasNewSince(database.db, 'rm', 'agent_3', last.at)).toBe(false);
    expect(await inbox.hasNewSince(database.db, 'rm', 'agent_3', last.at - 1)).toBe(true);
  });

  it('closes an awarded bounty with its winner and signature, submissions in order', async () => {
    const bounty = await bounties.findBounty(database.db, 'rm', 'bounty_1');
    expect(bounty).toMatchObject({ status: 'awarded', submission_count: 2, award: { submission_id: 'sub_2', winner_id: 'agent_3', signature: 'SIG_award' } });
    expect((await bounties.submissionsOf(database.db, 'rm', 'bounty_1')).map((s) => s.id)).toEqual(['sub_1', 'sub_2']);
    expect(await bounties.listBounties(database.db, 'rm', { status: 'open', limit: 10 })).toEqual([]);
    expect((await bounties.listBounties(database.db, 'rm', { status: 'awarded', limit: 10 })).map((b) => b.id)).toEqual(['bounty_1']);
  });

  it('finds substrings in any case, literally, through the trigram indexes', async () => {
    expect(await search.searchIds(database.db, 'rm', 'post', 'MOON SIG', 10)).toEqual(['post_self', 'post_a2', 'post_a1', 'post_b', 'post_a']);
    expect(await search.searchIds(database.db, 'rm', 'post', 'post_a1:', 10)).toEqual(['post_a1']);
    expect(await search.searchIds(database.db, 'rm', 'citizen', 'whisp', 10)).toEqual(['agent_3']);
    expect(await search.searchIds(database.db, 'rm', 'bounty', 'moonshot', 10)).toEqual(['bounty_1']);
    expect(await search.searchTags(database.db, 'rm', 'lph', 10)).toEqual([{ tag: 'alpha', posts: 1 }]);
    // `%` and `_` are literal characters, not wildcards.
    expect(await search.searchIds(database.db, 'rm', 'post', 'a%b', 10)).toEqual([]);
    expect(await search.searchIds(database.db, 'rm', 'post', 'post_', 10)).toHaveLength(5);
    // At this size a scan is the right plan; with many documents (inserted and rolled back here) a rare
    // substring is found through a trigram index and a common one by walking the newest-first (for tags,
    // most-used) index until the page is full. The plans are those of the queries search runs.
    const rollback = new Error('rollback');
    const plans: Record<string, string> = {};
    const plan = async (trx: any, query: { compile(): { sql: string; parameters: readonly unknown[] } }) => {
      const { sql: text, parameters } = query.compile();
      const { rows } = await trx.executeQuery({ sql: `explain ${text}`, parameters, query: { kind: 'RawNode' } } as any);
      return (rows as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN']).join('\n');
    };
    await database.db
      .transaction()
      .execute(async (trx) => {
        const bulk = (kind: string, rows: number) => sql`insert into rm.search_docs (kind, ref_id, text, seq)
          select ${kind}, ${kind} || '_bulk_' || i, md5(i::text) || ' filler ' || md5((i * 7)::text), 1000000 * ${kind.length} + i from generate_series(1, ${rows}) i`;
        await bulk('post', 100_000).execute(trx);
        await bulk('citizen', 50_000).execute(trx);
        await bulk('bounty', 50_000).execute(trx);
        await sql`insert into rm.tags (tag, posts) select md5(i::text) || '-filler', i % 1000 from generate_series(1, 100000) i`.execute(trx);
        // A sample of every row (300 x the target covers all 200,000): the estimate of a rare substring then
        // does not hang on whether the sample happened to hold one of the few real documents.
        await sql`alter table rm.search_docs alter column text set statistics 1000`.execute(trx);
        await sql`analyze rm.search_docs`.execute(trx);
        await sql`analyze rm.tags`.execute(trx);
        for (const kind of ['post', 'citizen', 'bounty'] as const) {
          plans[`${kind} rare`] = await plan(trx, search.matching(trx, 'rm', kind, 'moon sig', 20));
          plans[`${kind} common`] = await plan(trx, search.matching(trx, 'rm', kind, 'filler', 20));
        }
        plans['tag rare'] = await plan(trx, search.tagsMatching(trx, 'rm', 'zqzq', 20));
        plans['tag common'] = await plan(trx, search.tagsMatching(trx, 'rm', 'filler', 20));
        throw rollback;
      })
      .catch((error) => {
        if (error !== rollback) throw error;
      });
    for (const kind of ['post', 'citizen', 'bounty']) {
      expect(plans[`${kind} rare`]).toContain(`search_${kind}_joined_trgm`);
      expect(plans[`${kind} common`]).toContain(`search_${kind}_newest`);
    }
    expect(plans['tag rare']).toContain('tags_trgm');
    expect(plans['tag common']).toContain('tags_most_used');
    expect(Object.values(plans).join('\n')).not.toContain('Seq Scan');
  }, 60_000); // 300,000 rows through trigram indexes take seconds on a busy two-core machine

  it('rebuilds to the same rows', async () => {
    const before = await dump(database, 'rm');
    await rebuildReadModels({ database, store, projections, schema: 'rm', batchSize: 7 });
    expect(await dump(database, 'rm')).toEqual(before);
  });
});
