import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { UntrustedMark } from '@svc/domain';
import { markField } from '../untrusted';

export interface PostView {
  id: string;
  author: { id: string; handle: string | null };
  body: string;
  mint: string | null;
  parent_id: string | null;
  root_id: string | null;
  tags: string[];
  score: number;
  upvotes: number;
  downvotes: number;
  reply_count: number;
  flag_count: number;
  created_at: number;
  seq: number;
  hash: string;
  /** Only on a post whose words are aimed at agents (see @svc/domain untrustedMark). */
  untrusted?: UntrustedMark;
}

export interface FlagView {
  flagger_id: string;
  reason: string;
  at: number;
  seq: number;
}

const COLUMNS = [
  'p.post_id',
  'p.author_id',
  'a.handle as author_handle',
  'p.body',
  'p.mint',
  'p.parent_id',
  'p.root_id',
  'p.tags',
  'p.score',
  'p.upvotes',
  'p.downvotes',
  'p.reply_count',
  'p.flag_count',
  'p.created_at',
  'p.seq',
  'p.hash',
  'p.untrusted',
] as const;

function toView(row: any): PostView {
  return {
    id: row.post_id,
    author: { id: row.author_id, handle: row.author_handle ?? null },
    body: row.body,
    mint: row.mint ?? null,
    parent_id: row.parent_id ?? null,
    root_id: row.root_id ?? null,
    tags: typeof row.tags === 'string' ? JSON.parse(row.tags) : row.tags,
    score: Number(row.score),
    upvotes: Number(row.upvotes),
    downvotes: Number(row.downvotes),
    reply_count: Number(row.reply_count),
    flag_count: Number(row.flag_count),
    created_at: Number(row.created_at),
    seq: Number(row.seq),
    hash: row.hash,
    ...markField(row.untrusted),
  };
}

function posts(db: Kysely<any>, schema: string) {
  return db.selectFrom(`${schema}.posts as p`).leftJoin(`${schema}.agents as a`, 'a.agent_id', 'p.author_id').select(COLUMNS as any);
}

/** Top-level posts, newest first; `beforeSeq` continues from the last post of the previous page. */
export async function listTopPosts(
  db: Kysely<any>,
  schema: string,
  options: { mint?: string; since?: number; beforeSeq?: number; limit: number },
): Promise<PostView[]> {
  let query = posts(db, schema).where('p.parent_id', 'is', null).orderBy('p.seq', 'desc').limit(options.limit);
  if (options.mint !== undefined) query = query.where('p.mint', '=', options.mint);
  if (options.since !== undefined) query = query.where('p.created_at', '>', options.since);
  if (options.beforeSeq !== undefined) query = query.where('p.seq', '<', options.beforeSeq);
  return (await query.execute()).map(toView);
}

export async function findPost(db: Kysely<any>, schema: string, id: string): Promise<PostView | undefined> {
  const row = await posts(db, schema).where('p.post_id', '=', id).executeTakeFirst();
  return row ? toView(row) : undefined;
}

/** The replies below a post (replies to replies too) after `afterSeq`, in ledger order. */
export async function repliesOf(db: Kysely<any>, schema: string, post: PostView, limit: number, afterSeq = -1): Promise<PostView[]> {
  if (post.root_id === null) {
    return (await posts(db, schema).where('p.root_id', '=', post.id).where('p.seq', '>', afterSeq).orderBy('p.seq').limit(limit).execute()).map(toView);
  }
  const s = sql.raw(schema);
  const ids = await sql<{ post_id: string }>`
    with recursive thread(post_id, seq) as (
      select post_id, seq from ${s}.posts where parent_id = ${post.id}
      union all
      select p.post_id, p.seq from ${s}.posts p join thread t on p.parent_id = t.post_id)
    select post_id from thread where seq > ${afterSeq} order by seq limit ${limit}`.execute(db);
  if (ids.rows.length === 0) return [];
  return (await posts(db, schema).where('p.post_id', 'in', ids.rows.map((r) => r.post_id)).orderBy('p.seq').execute()).map(toView);
}

export async function flagsOf(db: Kysely<any>, schema: string, postId: string): Promise<FlagView[]> {
  const rows = await db.selectFrom(`${schema}.flags`).select(['flagger_id', 'reason', 'at', 'seq']).where('post_id', '=', postId).orderBy('seq').execute();
  return rows.map((r: any) => ({ flagger_id: r.flagger_id, reason: r.reason, at: Number(r.at), seq: Number(r.seq) }));
}

/** How many slices of the hot index one front page may read: a page that has not filled by then stays short. */
export const FRONT_MAX_SLICES = 10;

/** Top-level posts by hot value, `size` of them after `after`: a walk of the hot index, never a sort. */
export function frontSlice(db: Kysely<any>, schema: string, size: number, after?: { hot: number; seq: number }) {
  let query = posts(db, schema).select('p.hot').where('p.parent_id', 'is', null).orderBy('p.hot', 'desc').orderBy('p.seq', 'desc').limit(size);
  if (after) {
    const { hot, seq } = after;
    query = query.where((eb) => eb.or([eb('p.hot', '<', hot), eb.and([eb('p.hot', '=', hot), eb('p.seq', '<', seq)])]));
  }
  return query;
}

/**
 * The front page: top-level posts by hot value (see HOT_SQL), no author holding more than a quarter of
 * the page. Reads the index in slices until the page is full, the posts run out, or FRONT_MAX_SLICES
 * slices were read: with only a few authors the page cannot fill, and it must not read every post to
 * find that out.
 */
export async function frontPage(db: Kysely<any>, schema: string, limit: number): Promise<PostView[]> {
  const perAuthor = Math.max(1, Math.floor(limit / 4));
  const page: PostView[] = [];
  const byAuthor = new Map<string, number>();
  // Most pages fill from the first slice; a dominant author only costs another slice.
  const slice = limit * 2;
  let after: { hot: number; seq: number } | undefined;
  for (let read = 0; read < FRONT_MAX_SLICES; read++) {
    const rows = await frontSlice(db, schema, slice, after).execute();
    for (const row of rows) {
      const view = toView(row);
      const held = byAuthor.get(view.author.id) ?? 0;
      if (held >= perAuthor) continue;
      byAuthor.set(view.author.id, held + 1);
      page.push(view);
      if (page.length === limit) return page;
    }
    if (rows.length < slice) return page;
    const last = rows[rows.length - 1] as any;
    after = { hot: Number(last.hot), seq: Number(last.seq) };
  }
  return page;
}

export async function postsByAuthor(db: Kysely<any>, schema: string, agentId: string, limit: number): Promise<PostView[]> {
  return (await posts(db, schema).where('p.author_id', '=', agentId).orderBy('p.seq', 'desc').limit(limit).execute()).map(toView);
}

/** Posts by id (a list, or a subquery of ids), newest first. */
export async function postsByIds(db: Kysely<any>, schema: string, ids: string[] | SelectQueryBuilder<any, any, any>): Promise<PostView[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  return (await posts(db, schema).where('p.post_id', 'in', ids).orderBy('p.seq', 'desc').execute()).map(toView);
}
