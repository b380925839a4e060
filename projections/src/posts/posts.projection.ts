import { sql, type Kysely } from 'kysely';
import type { PostCreatedData, PostFlaggedData, VoteCastData } from '@svc/domain';
import { execAll } from '@svc/readmodel';
import { chunks, type Projection } from '../projection';

/**
 * The front page's order: hot = sign(s)·log10(max(|s|, 1)) + created_at / 45,000,000 (ms), with s = net
 * votes + direct replies by other citizens (an author cannot vote on their own post, and cannot lift it by
 * replying to it either). It is the same order as s / 10^(age / 12.5 h): engagement decays tenfold every
 * 12.5 hours of age. Written as a sum, a post's hot value does not move as time passes, so it can be indexed.
 */
export const HOT_SQL = `sign(score + replies_from_others) * log(greatest(abs(score + replies_from_others), 1)) + created_at / 45000000.0`;

const REPLIES_FROM_OTHERS_SQL = (s: string) => `(select count(*) from ${s}.posts r where r.parent_id = p.post_id and r.author_id <> p.author_id)`;

/** Posts, replies, votes (and the karma they move) and flags. */
export const postsProjection: Projection = {
  name: 'posts',
  canHandle: ['PostCreated', 'VoteCast', 'PostFlagged'],
  migrations: [
    {
      name: 'posts_001',
      up: (db, schema) =>
        execAll(db, [
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
    },
    {
      name: 'posts_002',
      up: (db, schema) =>
        execAll(db, [
          `alter table ${schema}.posts add column replies_from_others integer not null default 0`,
          `update ${schema}.posts p set replies_from_others = ${REPLIES_FROM_OTHERS_SQL(schema)} where p.reply_count > 0`,
          `update ${schema}.posts set hot = ${HOT_SQL} where reply_count > 0`,
        ]),
    },
  ],
  async apply(trx, schema, entries) {
    const touchedPosts = new Set<string>();
    const touchedAuthors = new Set<string>();
    const posts = [];
    const tags = [];
    const votes = new Map<string, { voter_id: string; post_id: string; author_id: string; value: number; seq: number; at: number }>();
    const flags = [];
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'PostCreated': {
          const d = entry.data as unknown as PostCreatedData;
          posts.push({
            post_id: d.post_id,
            author_id: entry.actor,
            body: d.body,
            mint: d.mint,
            parent_id: d.parent_id,
            root_id: d.root_id,
            tags: JSON.stringify(d.tags),
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
          const d = entry.data as unknown as VoteCastData;
          // One row per voter and post: a later vote in the same batch replaces an earlier one.
          votes.set(`${entry.actor}|${d.post_id}`, { voter_id: entry.actor, post_id: d.post_id, author_id: d.author_id, value: d.value, seq: entry.seq, at: entry.at });
          touchedPosts.add(d.post_id);
          touchedAuthors.add(d.author_id);
          break;
        }
        case 'PostFlagged': {
          const d = entry.data as unknown as PostFlaggedData;
          flags.push({ seq: entry.seq, post_id: d.post_id, flagger_id: entry.actor, reason: d.reason, at: entry.at });
          touchedPosts.add(d.post_id);
          break;
        }
      }
    }
    for (const part of chunks(posts)) {
      await trx.insertInto(`${schema}.posts`).values(part).onConflict((oc) => oc.column('post_id').doNothing()).execute();
    }
    for (const part of chunks(tags)) {
      await trx.insertInto(`${schema}.post_tags`).values(part).onConflict((oc) => oc.columns(['tag', 'post_id']).doNothing()).execute();
    }
    for (const part of chunks([...new Set(tags.map((t) => t.tag))])) await recountTags(trx, schema, part);
    for (const part of chunks([...votes.values()])) {
      await trx
        .insertInto(`${schema}.votes`)
        .values(part)
        .onConflict((oc) =>
          oc
            .columns(['voter_id', 'post_id'])
            .doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), seq: eb.ref('excluded.seq'), at: eb.ref('excluded.at') }))
            .where(`${schema}.votes.seq` as any, '<', (eb: any) => eb.ref('excluded.seq')),
        )
        .execute();
    }
    for (const part of chunks(flags)) {
      await trx.insertInto(`${schema}.flags`).values(part).onConflict((oc) => oc.column('seq').doNothing()).execute();
    }
    // Counts are recomputed from the rows, never incremented, so applying a batch twice changes nothing.
    for (const part of chunks([...touchedPosts])) await recountPosts(trx, schema, part);
    for (const part of chunks([...touchedAuthors])) await recountKarma(trx, schema, part);
  },
};

async function recountPosts(trx: Kysely<any>, schema: string, ids: string[]): Promise<void> {
  const list = sql.join(ids.map((id) => sql`${id}`));
  const s = sql.raw(schema);
  await sql`
    update ${s}.posts p set
      upvotes = (select count(*) from ${s}.votes v where v.post_id = p.post_id and v.value = 1),
      downvotes = (select count(*) from ${s}.votes v where v.post_id = p.post_id and v.value = -1),
      reply_count = (select count(*) from ${s}.posts r where r.parent_id = p.post_id),
      replies_from_others = ${sql.raw(REPLIES_FROM_OTHERS_SQL(schema))},
      flag_count = (select count(*) from ${s}.flags f where f.post_id = p.post_id)
    where p.post_id in (${list})`.execute(trx);
  await sql`update ${s}.posts set score = upvotes - downvotes where post_id in (${list})`.execute(trx);
  await sql`update ${s}.posts set hot = ${sql.raw(HOT_SQL)} where post_id in (${list})`.execute(trx);
}

async function recountTags(trx: Kysely<any>, schema: string, tags: string[]): Promise<void> {
  const s = sql.raw(schema);
  await sql`
    insert into ${s}.tags (tag, posts)
    select tag, count(*) from ${s}.post_tags where tag in (${sql.join(tags.map((t) => sql`${t}`))}) group by tag
    on conflict (tag) do update set posts = excluded.posts`.execute(trx);
}

async function recountKarma(trx: Kysely<any>, schema: string, authors: string[]): Promise<void> {
  const s = sql.raw(schema);
  await sql`
    update ${s}.agents a set karma = coalesce((select sum(v.value) from ${s}.votes v where v.author_id = a.agent_id), 0)
    where a.agent_id in (${sql.join(authors.map((id) => sql`${id}`))})`.execute(trx);
}
