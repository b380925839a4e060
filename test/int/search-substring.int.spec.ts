import { sql } from 'kysely';
import { PostgresEventStore } from '@svc/ledger';
import { Projector, projections, search } from '@svc/projections';
import { openDatabase, type SqlDatabase } from '@svc/readmodel';
import { freshDatabase, tempDir, type FreshDatabase } from '../support/env';

const POSTS = 9000;
const WORDS = ['sol', 'moon', 'pump', 'whale', 'alpha', 'beta', 'signal', 'chart', 'candle', 'volume', 'liquidity', 'rug'];
/** Posts (by position, 0 oldest) that carry a planted text; everything else is ten words from WORDS. */
const PLANTED: Record<number, string> = {
  5: 'an old zebracorn sighting',
  17: 'ZebraCorn again, in capitals',
  8500: 'a recent zebracorn',
  40: 'shipped 100%_done today',
  41: 'shipped 1000 done today',
  42: 'path a_b\\c here',
  43: 'path axb\\c here',
  44: 'path a_bc here',
};
// A phrase across words: five times among the newest posts and ten times further back, so a page of 20
// needs the older ones and a page of 5 does not.
for (const at of [8990, 8000, 7000, 6500, 3500, 2900, 2500, 2000, 1500, 1200, 900, 600, 300, 200, 100]) PLANTED[at] = 'big Whale Alpha rotation';

function body(i: number): string {
  if (PLANTED[i] !== undefined) return PLANTED[i]!;
  let state = i + 1;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  const words: string[] = [];
  while (words.length < 10) {
    const word = WORDS[(next() >>> 8) % WORDS.length]!;
    // The planted phrase stays rare: never "whale alpha" by chance.
    if (word === 'alpha' && words[words.length - 1] === 'whale') continue;
    words.push(word);
  }
  return words.join(' ');
}

describe('search by substring: the bounded newest-first read and the trigram lookup behind it', () => {
  let db: FreshDatabase;
  let database: SqlDatabase;

  beforeAll(async () => {
    db = await freshDatabase('search_substring');
    database = await openDatabase({ url: db.url, dataDir: tempDir('search-substring') });
    const store = await new PostgresEventStore(database).init();
    await new Projector({ database, store, projections, schema: 'rm' }).init();
    const texts = Array.from({ length: POSTS }, (_, i) => body(i));
    await sql`insert into rm.search_docs (kind, ref_id, text, seq)
      select 'post', 'post_' || n, t, 10 + n * 3 from unnest(${texts}::text[]) with ordinality as d(t, n)`.execute(database.db);
    await sql`insert into rm.search_docs (kind, ref_id, text, seq)
      select 'citizen', 'agent_' || n, 'handle' || n || E'\\n' || case when n % 7 = 0 then 'Moon watcher' else 'quiet' end, 11 + n * 3
      from generate_series(1, 50) n`.execute(database.db);
    await sql`analyze rm.search_docs`.execute(database.db);
    await store.close();
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await db?.drop();
  });

  /** The same question answered by reading every document, with no LIKE and no index. */
  async function scanned(kind: string, q: string, limit: number): Promise<string[]> {
    const { rows } = await sql<{ ref_id: string }>`
      select ref_id from rm.search_docs where kind = ${kind} and strpos(lower(text), lower(${q})) > 0 order by seq desc limit ${limit}`.execute(database.db);
    return rows.map((r) => r.ref_id);
  }

  const cases: Array<[string, string]> = [
    ['a term matching nothing', 'qxjzvw'],
    ['a phrase matching nothing', 'nothing matches this'],
    ['a rare term, mostly in old posts', 'zebracorn'],
    ['a rare term in other case', 'ZEBRAcorn'],
    ['a very common word', 'moon'],
    ['a very common word in capitals', 'MOON'],
    ['a short phrase across words', 'whale alpha'],
    ['a short phrase across words, other case', 'WHALE ALPHA ROT'],
    ['a % taken literally', '100%'],
    ['a % and _ taken literally', '0%_d'],
    ['a _ taken literally', 'a_bc'],
    ['a backslash taken literally', 'a_b\\c'],
    ['a backslash before a letter', 'b\\c h'],
  ];

  it.each(cases)('finds the same posts as a scan of every post: %s', async (_label, q) => {
    for (const limit of [5, 20, 50]) {
      const expected = await scanned('post', q, limit);
      expect(await search.searchIds(database.db, 'rm', 'post', q, limit)).toEqual(expected);
    }
  });

  it('pages the phrase from the newest posts alone when they fill it, and from older ones when not', async () => {
    // Two of the phrase's posts are among the newest PROBE_DOCS.
    expect(await search.searchIds(database.db, 'rm', 'post', 'whale alpha', 2)).toEqual(['post_8991', 'post_8001']);
    expect(await search.searchIds(database.db, 'rm', 'post', 'whale alpha', 5)).toHaveLength(5);
    expect(await search.searchIds(database.db, 'rm', 'post', 'whale alpha', 20)).toHaveLength(15);
    expect(await search.searchIds(database.db, 'rm', 'post', 'zebracorn', 20)).toEqual(['post_8501', 'post_18', 'post_6']);
  });

  it('finds citizens the same way when the kind holds fewer documents than one read', async () => {
    for (const q of ['moon WATCH', 'handle4', 'qxjzvw']) expect(await search.searchIds(database.db, 'rm', 'citizen', q, 20)).toEqual(await scanned('citizen', q, 20));
  });

  /** How the database answers a search of 20 posts for `q`, as EXPLAIN ANALYZE prints it. */
  async function plan(q: string): Promise<string> {
    const { sql: text, parameters } = search.matching(database.db, 'rm', 'post', q, 20).compile();
    const { rows } = await database.db.executeQuery<Record<string, string>>({ sql: `explain (analyze, costs off) ${text}`, parameters, query: { kind: 'RawNode' } } as any);
    return rows.map((r) => r['QUERY PLAN']!).join('\n');
  }

  it('reads at most the probed number of newest documents in order, and a common word no further', async () => {
    // The walk of the newest-first index that once read every post for a term that matches none.
    const walked = (text: string) => [...text.matchAll(/Index Scan using search_post_newest on search_docs\S* \(actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/g)].map((m) => Number(m[1]));
    for (const q of ['qxjzvw', 'zebracorn', 'nothing matches this', 'whale alpha']) {
      const text = await plan(q);
      expect(walked(text).length).toBeGreaterThan(0);
      expect(Math.max(...walked(text))).toBeLessThanOrEqual(search.PROBE_DOCS);
    }
    const common = await plan('moon');
    expect(Math.max(...walked(common))).toBeLessThan(100);
    // The newest posts fill the page, so the older ones are never looked up.
    expect(common).toMatch(/Subquery Scan on "\*SELECT\* 2" \(never executed\)/);
  });

  it('looks a phrase of common words up where its words meet, not through every post that holds both words', async () => {
    // At these 9,000 posts the planner may rather walk the older ones than take the trigram index, as it does at
    // 100,000: plain index and sequential scans are turned off so that it must say what the index hands over.
    const text = await database.db.transaction().execute(async (trx) => {
      await sql`set local enable_indexscan = off`.execute(trx);
      await sql`set local enable_seqscan = off`.execute(trx);
      const { sql: query, parameters } = search.matching(trx, 'rm', 'post', 'whale alpha', 20).compile();
      const { rows } = await trx.executeQuery<Record<string, string>>({ sql: `explain (analyze, costs off) ${query}`, parameters, query: { kind: 'RawNode' } } as any);
      return rows.map((r) => r['QUERY PLAN']!).join('\n');
    });
    const looked = Number(/Bitmap Index Scan on search_post_joined_trgm \(actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(text)?.[1]);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from rm.search_docs where kind = 'post' and strpos(lower(text), 'whale') > 0 and strpos(lower(text), 'alpha') > 0`.execute(database.db);
    // An index of each word's trigrams alone hands every post holding both words to the recheck.
    expect(looked).toBeGreaterThanOrEqual(15);
    expect(looked).toBeLessThan(rows[0]!.n / 3);
  });
});
