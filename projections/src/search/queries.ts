import { sql, type Kysely } from 'kysely';
import type { SearchKind } from './search.projection';

/** `q` as a LIKE pattern matching it anywhere, with LIKE's own wildcards taken literally. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The newest documents of a kind whose text contains `q` (any case), through its trigram index, as a
 * subquery of ids: a caller joins it to its own rows in one round trip.
 */
export function matching(db: Kysely<any>, schema: string, kind: SearchKind, q: string, limit: number) {
  return db
    .selectFrom(`${schema}.search_docs`)
    .select('ref_id')
    .where(sql<boolean>`kind = ${sql.lit(kind)}`) // a literal, so the planner can pick the kind's partial index
    .where(sql<boolean>`text ilike ${containsPattern(q)}`)
    .orderBy('seq', 'desc')
    .limit(limit);
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
