import { sql, type Kysely } from 'kysely';
import { untrustedMark, untrustedOfEntry } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertNew, insertRows } from '../projection';
import { markColumn, untrustedColumnMigration } from '../untrusted';

/**
 * The front page's order: hot = sign(s)·log10(max(|s|, 1)) + created_at / 45,000,000 (ms), with s = net
 * votes + direct replies by other citizens (an author cannot vote on their own post, and cannot lift it by
 * replying to it either). It is the same order as s / 10^(age / 12.5 h): engagement decays tenfold every
 * 12.5 hours of age. Written as a sum, a post's hot value does not move as time passes, so it can be indexed.
 */
export const HOT_SQL = hotSql('score + replies_from_others', 'created_at');

/** HOT_SQL over other expressions of the same types (integer engagement, bigint milliseconds), so it yields the same doubles. */
function hotSql(engagement: string, createdAt: string): string {
  return `sign(${engagement}) * log(greatest(abs(${engagement}), 1)) + ${createdAt} / 45000000.0`;
}

const REPLIES_FROM_OTHERS_SQL = (s: string) => `(select count(*) from ${s}.posts r where r.parent_id = p.post_id and r.author_id <> p.author_id)`;

/** Posts, replies, votes and flags. */
export const postsProjection = defineProjection({
  name: 'posts',
  canHandle: ['PostCreated', 'VoteCast', 'PostFlagged'],
  migrations: [
    sqlMigration('posts_001', (schema) => [
      `create table ${schema}.posts (
         post_id text primary key,
         author_id text not null,
         body text not null,
         mint text,
         parent_id text,
         root_id text,
         tags jsonb not null,
         score integer not null default 0,
         upvotes integer not null default 0,
         downvotes integer not null default 0,
         reply_count integer not null default 0,
         flag_count integer not null default 0,
         hot double precision not null,
         created_at bigint not null,
         seq bigint not null unique,
         hash text not null)`,
      `create index posts_top_newest on ${schema}.posts (seq desc) where parent_id is null`,
      `create index posts_top_by_mint on ${schema}.posts (mint, seq desc) where parent_id is null`,
      `create index posts_hot on ${schema}.posts (hot desc, seq desc) where parent_id is null`,
      `create index posts_parent on ${schema}.posts (parent_id, seq)`,
      `create index posts_root on ${schema}.posts (root_id, seq)`,
      `create index posts_author on ${schema}.posts (author_id, seq desc)`,
      `create index posts_created on ${schema}.posts (created_at)`,
      `create table ${schema}.post_tags (tag text not null, post_id text not null, seq bigint not null, primary key (tag, post_id))`,
      // One row per distinct tag, so searching tags reads the tags, not every use of them.
      `create table ${schema}.tags (tag text primary key, posts integer not null)`,
      `create table ${schema}.votes (
         voter_id text not null,
         post_id text not null,
         author_id text not null,
         value smallint not null,
         seq bigint not null,
         at bigint not null,
         primary key (voter_id, post_id))`,
      `create index votes_post on ${schema}.votes (post_id)`,
      `create index votes_author on ${schema}.votes (author_id)`,
      `create table ${schema}.flags (
         seq bigint primary key,
         post_id text not null,
         flagger_id text not null,
         reason text not null,
         at bigint not null)`,
      `create index flags_post on ${schema}.flags (post_id, seq)`,
    ]),
    sqlMigration('posts_002', (schema) => [
      `alter table ${schema}.posts add column replies_from_others integer not null default 0`,
      `update ${schema}.posts p set replies_from_others = ${REPLIES_FROM_OTHERS_SQL(schema)} where p.reply_count > 0`,
      `update ${schema}.posts set hot = ${HOT_SQL} where reply_count > 0`,
    ]),
    untrustedColumnMigration('posts_003', 'posts', 'post_id', ['body', 'tags'], (row) =>
      untrustedMark(String(row.body), ...(typeof row.tags === 'string' ? JSON.parse(row.tags) : (row.tags as string[]))),
    ),
  ],
  async apply(trx, schema, entries, options) {
    const touchedPosts = new Set<string>();
    const posts = [];
    const tags = [];
    const votes = new Map<string, { voter_id: string; post_id: string; author_id: string; value: number; seq: number; at: number }>();
    const flags = [];
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'PostCreated': {
          const d = entry.data;
          posts.push({
            post_id: d.post_id,
            author_id: entry.actor,
            body: d.body,
            mint: d.mint,
            parent_id: d.parent_id,
            root_id: d.root_id,
            tags: JSON.stringify(d.tags),
            untrusted: markColumn(untrustedOfEntry(entry.type, d)),
            hot: entry.at / 45_000_000,
            created_at: entry.at,
            seq: entry.seq,
            hash: entry.hash,
          });
          for (const tag of new Set(d.tags.map((t) => t.toLowerCase()))) tags.push({ tag, post_id: d.post_id, seq: entry.seq });
          if (d.parent_id) touchedPosts.add(d.parent_id);
          break;
        }
        case 'VoteCast': {
          const d = entry.data;
          // One row per voter and post: a later vote in the same batch replaces an earlier one.
          votes.set(`${entry.actor}|${d.post_id}`, { voter_id: entry.actor, post_id: d.post_id, author_id: d.author_id, value: d.value, seq: entry.seq, at: entry.at });
          touchedPosts.add(d.post_id);
          break;
        }
        case 'PostFlagged': {
          const d = entry.data;
          flags.push({ seq: entry.seq, post_id: d.post_id, flagger_id: entry.actor, reason: d.reason, at: entry.at });
          touchedPosts.add(d.post_id);
          break;
        }
        default: {
          const never: never = entry;
          return never;
        }
      }
    }
    const s = sql.raw(schema);
    const postColumns = { post_id: 'text', author_id: 'text', body: 'text', mint: 'text', parent_id: 'text', root_id: 'text', tags: 'jsonb', untrusted: 'jsonb', hot: 'double precision', created_at: 'bigint', seq: 'bigint', hash: 'text' } as const;
    await insertNew(trx, `${schema}.posts`, posts, postColumns, sql`on conflict (post_id) do nothing`, options);
    if (options?.bulk) {
      // Tag counts are left to settle, which counts the rows.
      await insertNew(trx, `${schema}.post_tags`, tags, { tag: 'text', post_id: 'text', seq: 'bigint' }, sql`on conflict (tag, post_id) do nothing`, options);
    } else if (tags.length > 0) {
      // A tag's count moves by the uses this batch added, and only those: post_tags rows are never deleted, so the
      // count stays that of its rows without reading them again, and a batch applied twice adds nothing the second time.
      await sql`
        with added as (${insertRows(`${schema}.post_tags`, tags, { tag: 'text', post_id: 'text', seq: 'bigint' })} on conflict (tag, post_id) do nothing returning tag)
        insert into ${s}.tags (tag, posts) select tag, count(*) from added group by tag
        on conflict (tag) do update set posts = ${s}.tags.posts + excluded.posts`.execute(trx);
    }
    if (votes.size > 0) {
      const columns = { voter_id: 'text', post_id: 'text', author_id: 'text', value: 'smallint', seq: 'bigint', at: 'bigint' } as const;
      await sql`${insertRows(`${schema}.votes`, [...votes.values()], columns)}
        on conflict (voter_id, post_id) do update set value = excluded.value, seq = excluded.seq, at = excluded.at
        where ${s}.votes.seq < excluded.seq`.execute(trx);
    }
    const flagColumns = { seq: 'bigint', post_id: 'text', flagger_id: 'text', reason: 'text', at: 'bigint' } as const;
    await insertNew(trx, `${schema}.flags`, flags, flagColumns, sql`on conflict (seq) do nothing`, options);
    if (options?.bulk) return;
    // Counts are recomputed from the rows, never incremented, so applying a batch twice changes nothing.
    if (touchedPosts.size > 0) await recountPosts(trx, schema, [...touchedPosts]);
  },
  // Every tag's count from its rows, and every post and author a batch would have recounted: those with a vote, a
  // reply or a flag. The others keep the figures their insert gave them, as they would have batch by batch.
  async settle(trx, schema) {
    const s = sql.raw(schema);
    await sql`insert into ${s}.tags (tag, posts) select tag, count(*) from ${s}.post_tags group by tag
      on conflict (tag) do update set posts = excluded.posts`.execute(trx);
    await recountPosts(trx, schema, 'all');
  },
});

/** Recounts votes, replies and flags of the given posts (or of every post that has any) from the rows, in one statement. */
async function recountPosts(trx: Kysely<any>, schema: string, ids: string[] | 'all'): Promise<void> {
  const s = sql.raw(schema);
  const all = ids === 'all';
  const targets = all
    ? sql`select post_id from ${s}.votes union select parent_id from ${s}.posts where parent_id is not null union select post_id from ${s}.flags`
    : sql`select unnest(${ids}::text[]) as post_id`;
  const only = (column: string) => (all ? sql`true` : sql`${sql.raw(column)} = any(${ids}::text[])`);
  // Integer counts, so that the hot value is HOT_SQL over the same types as the columns it reads.
  await sql`
    update ${s}.posts p set
      upvotes = c.upvotes,
      downvotes = c.downvotes,
      score = c.upvotes - c.downvotes,
      reply_count = c.replies,
      replies_from_others = c.replies_from_others,
      flag_count = c.flags,
      hot = ${sql.raw(hotSql('(c.upvotes - c.downvotes) + c.replies_from_others', 'p.created_at'))}
    from (
      select t.post_id,
             coalesce(v.upvotes, 0)::int as upvotes,
             coalesce(v.downvotes, 0)::int as downvotes,
             coalesce(r.replies, 0)::int as replies,
             coalesce(r.from_others, 0)::int as replies_from_others,
             coalesce(f.flags, 0)::int as flags
      from (${targets}) t
      left join (
        select post_id, count(*) filter (where value = 1) as upvotes, count(*) filter (where value = -1) as downvotes
        from ${s}.votes where ${only('post_id')} group by post_id
      ) v on v.post_id = t.post_id
      left join (
        select r.parent_id, count(*) as replies, count(*) filter (where r.author_id <> parent.author_id) as from_others
        from ${s}.posts r join ${s}.posts parent on parent.post_id = r.parent_id
        where ${only('r.parent_id')} group by r.parent_id
      ) r on r.parent_id = t.post_id
      left join (select post_id, count(*) as flags from ${s}.flags where ${only('post_id')} group by post_id) f on f.post_id = t.post_id
    ) c
    where p.post_id = c.post_id`.execute(trx);
}
