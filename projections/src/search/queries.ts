import { sql, type Kysely } from 'kysely';
import type { SearchKind } from './search.projection';

/** `q` as a LIKE pattern matching it anywhere, with LIKE's own wildcards taken literally. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Ids of the newest documents of a kind whose text contains `q` (any case), through its trigram index. */
export async function searchIds(db: Kysely<any>, schema: string, kind: SearchKind, q: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom(`${schema}.search_docs`)
    .select('ref_id')
    .where(sql<boolean>`kind = ${sql.lit(kind)}`) // a literal, so the planner can pick the kind's partial index
    .where(sql<boolean>`text ilike ${containsPattern(q)}`)
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r: any) => r.ref_id);
}

/** Tags containing `q`, most used first. */
export async function searchTags(db: Kysely<any>, schema: string, q: string, limit: number): Promise<Array<{ tag: string; posts: number }>> {
  const rows = await db
    .selectFrom(`${schema}.post_tags`)
    .select(['tag', (eb) => eb.fn.countAll().as('n')])
    .where(sql<boolean>`tag ilike ${containsPattern(q)}`)
    .groupBy('tag')
    .orderBy('n', 'desc')
    .orderBy('tag')
    .limit(limit)
    .execute();
  return rows.map((r: any) => ({ tag: r.tag, posts: Number(r.n) }));
}
