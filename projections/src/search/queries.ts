import { sql, type Kysely } from 'kysely';
import type { SearchKind } from './search.projection';

/** `q` as a LIKE pattern matching it anywhere, with LIKE's own wildcards taken literally. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** How many of a kind's newest documents a search of a phrase reads to see whether all its words are common. */
export const SAMPLE_DOCS = 200;

/**
 * The most newest documents a search reads in order before it turns to the trigram index: 1,000 for a word
 * (one in 75 documents fills a page of 20 from them) and 6,000 for a phrase whose words are all common. Such a
 * phrase is rarer than its words but its trigrams are not, so a trigram lookup would recheck every document
 * that holds the words; 6,000 fill a page of a phrase in one document in 300.
 */
export function probeSize(q: string): number {
  return wordsOf(q).length > 1 ? 6000 : 1000;
}

function wordsOf(q: string): string[] {
  return q.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/**
 * The newest documents of a kind whose text contains `q` (any case), as a subquery of ids: a caller joins it to
 * its own rows in one round trip. First the kind's newest documents are read in order (see probeSize); only if
 * they do not fill the page are the older ones looked up through the trigram index. A common `q` then never
 * pays for a trigram recheck, and a `q` that matches little never walks every document.
 */
export function matching(db: Kysely<any>, schema: string, kind: SearchKind, q: string, limit: number) {
  const docs = sql.raw(`${schema}.search_docs`);
  const ofKind = sql`kind = ${sql.lit(kind)}`; // a literal, so the planner can pick the kind's partial indexes
  const pattern = containsPattern(q);
  const words = wordsOf(q);
  // A phrase with a word missing from the newest documents is rare, and so are its trigrams: a word's worth.
  const reading =
    words.length > 1
      ? sql`reading as (
          select case when ${sql.join(words.map((w) => sql`bool_or(text ilike ${containsPattern(w)})`), sql` and `)}
            then ${sql.lit(probeSize(q))} else ${sql.lit(probeSize(words[0]!))} end as docs
          from (select text from ${docs} where ${ofKind} order by seq desc limit ${sql.lit(SAMPLE_DOCS)}) sample)`
      : sql`reading as (select ${sql.lit(probeSize(q))} as docs)`;
  // The executor runs the branches of a UNION ALL in order and stops once the limit is met. The second is
  // ordered by `seq + 0` so that it cannot walk the newest-first index: a term the probe found little of
  // would walk every older document to find the few it has.
  const found = sql`(
    with ${reading}
    (select ref_id, seq from (select ref_id, seq, text from ${docs} where ${ofKind} order by seq desc limit (select docs from reading)) newest
      where text ilike ${pattern} order by seq desc limit ${limit})
    union all
    (select ref_id, seq from ${docs}
      where ${ofKind} and text ilike ${pattern}
        and seq < (select min(seq) from (select seq from ${docs} where ${ofKind} order by seq desc limit (select docs from reading)) probed)
      order by seq + 0 desc limit ${limit}))`;
  return db.selectFrom(found.as('found')).select('ref_id').limit(limit);
}

export async function searchIds(db: Kysely<any>, schema: string, kind: SearchKind, q: string, limit: number): Promise<string[]> {
  return (await matching(db, schema, kind, q, limit).execute()).map((r: any) => r.ref_id);
}

/** The tags containing `q`, most used first: a trigram-index lookup, or a walk of the most-used index. */
export function tagsMatching(db: Kysely<any>, schema: string, q: string, limit: number) {
  return db
    .selectFrom(`${schema}.tags`)
    .select(['tag', 'posts'])
    .where(sql<boolean>`tag ilike ${containsPattern(q)}`)
    .orderBy('posts', 'desc')
    .orderBy('tag')
    .limit(limit);
}

export async function searchTags(db: Kysely<any>, schema: string, q: string, limit: number): Promise<Array<{ tag: string; posts: number }>> {
  return (await tagsMatching(db, schema, q, limit).execute()).map((r: any) => ({ tag: r.tag, posts: Number(r.posts) }));
}
