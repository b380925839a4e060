import { sql, type Kysely } from 'kysely';
import type { SearchKind } from './search.projection';

/** `q` as a LIKE pattern matching it anywhere, with LIKE's own wildcards taken literally. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The most newest documents a search reads in order before it turns to the trigram index: one in 75 documents
 * fills a page of 20 from them.
 */
export const PROBE_DOCS = 1000;

/**
 * The letter that stands for a space in the trigram index: pg_trgm splits text into words and indexes each word's
 * trigrams alone, so an index of the text as it is cannot tell a phrase from its words anywhere in a document.
 * With spaces joined, the trigrams across each junction are indexed too ("le\u01C2", "e\u01C2a" and "\u01C2al" of
 * "whale alpha"), and a phrase of common words is looked up by where its words meet. A letter, so that pg_trgm
 * takes it as part of a word. The search_003 migration indexes with it: another needs another index.
 */
export const JOINER = '\u01C2';

/** The text or pattern as the trigram index holds it (see JOINER). */
function joined(text: string): string {
  return text.replaceAll(' ', JOINER);
}

/**
 * The newest documents of a kind whose text contains `q` (any case), as a subquery of ids: a caller joins it to
 * its own rows in one round trip. First the kind's PROBE_DOCS newest documents are read in order; only if they do
 * not fill the page are the older ones looked up through the trigram index, by the text with its spaces joined,
 * then checked against the text as it is. A common `q` then never pays for a trigram recheck, and a `q` that
 * matches little never walks every document.
 */
export function matching(db: Kysely<any>, schema: string, kind: SearchKind, q: string, limit: number) {
  const docs = sql.raw(`${schema}.search_docs`);
  const ofKind = sql`kind = ${sql.lit(kind)}`; // a literal, so the planner can pick the kind's partial indexes
  const pattern = containsPattern(q);
  // The executor runs the branches of a UNION ALL in order and stops once the limit is met. The second is
  // ordered by `seq + 0` so that it cannot walk the newest-first index: a term the probe found little of
  // would walk every older document to find the few it has.
  const found = sql`(
    (select ref_id, seq from (select ref_id, seq, text from ${docs} where ${ofKind} order by seq desc limit ${sql.lit(PROBE_DOCS)}) newest
      where text ilike ${pattern} order by seq desc limit ${limit})
    union all
    (select ref_id, seq from ${docs}
      where ${ofKind} and translate(text, ' ', ${sql.lit(JOINER)}) ilike ${joined(pattern)} and text ilike ${pattern}
        and seq < (select min(seq) from (select seq from ${docs} where ${ofKind} order by seq desc limit ${sql.lit(PROBE_DOCS)}) probed)
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
