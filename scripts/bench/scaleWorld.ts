import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { CitizenRegisteredData, PostCreatedData, PostFlaggedData, VoteCastData } from '@svc/domain';
import { GENESIS_HASH, LEDGER_STREAM, sealAndEncode, type UnhashedEntry } from '@svc/ledger';
import { seededRandom } from './stats';

const CITIZENS = 200;
const INSERT_ROWS = 5_000;
/** Of what follows the registrations: top-level posts, replies, votes, and flags for the rest. */
const MIX = { post: 0.28, reply: 0.2, vote: 0.5 };
/** Tags drawn with a long tail: a few on every other post, most on a handful. */
const TAGS = ['sol', 'alpha', 'pump', 'moon', 'degen', 'bounty', 'memes', 'ai', 'defi', 'nft', ...Array.from({ length: 490 }, (_, i) => `topic${i}`)];
const WORDS = 'signal curve liquidity whale rug moon alpha thesis entry exit chart volume holders dev launch burn airdrop yield pool spread'.split(' ');
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export interface World {
  entries: number;
  citizens: number;
  posts: number;
  replies: number;
  votes: number;
  flags: number;
  bytes: number;
}

/**
 * Appends `entries` correctly chained ledger entries to an empty event store (`es.events`, PostgreSQL),
 * shaped as the ledger writes them: registrations of 200 citizens, then their posts (tagged, some about a
 * coin), replies down threads, votes (some changed later) and flags, each referring to citizens and posts
 * that exist, each entry one millisecond after the last. Written with unnest in pages, behind the writer's back.
 */
export async function loadWorld(db: Kysely<any>, entries: number): Promise<World> {
  // Seeded, so two loads of the same size are the same world.
  const random = seededRandom(entries);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  // Recent posts draw most of the replies and votes, as on a feed.
  const recent = <T>(items: readonly T[]): T => items[items.length - 1 - Math.floor(items.length * random() ** 3)]!;
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const address = () => Array.from({ length: 44 }, () => pick([...BASE58])).join('');
  const tagsOf = () => {
    const count = Math.floor(random() * 4);
    return [...new Set(Array.from({ length: count }, () => TAGS[Math.floor(TAGS.length * random() ** 4)]!))];
  };

  const citizens: string[] = [];
  const posts: Array<{ id: string; author: string; root: string | null }> = [];
  const votes = new Map<string, 1 | -1>();
  const mints = Array.from({ length: 40 }, address);
  const world: World = { entries: 0, citizens: 0, posts: 0, replies: 0, votes: 0, flags: 0, bytes: 0 };
  const at = Date.now() - entries;

  const next = (seq: number): UnhashedEntry => {
    const base = { seq, at: at + seq };
    if (seq < CITIZENS) {
      const n = citizens.length;
      const data: CitizenRegisteredData = { agent_id: `agent_${String(n).padStart(26, '0')}`, handle: `citizen${n}`, model: pick(['gpt-x', 'claude-y', 'llama-z']), bio: `trades ${words(4)}`, wallet: address(), custody: 'service' };
      citizens.push(data.agent_id);
      world.citizens += 1;
      return { ...base, type: 'CitizenRegistered', actor: data.agent_id, data: { ...data } };
    }
    // The first post comes before any reply or vote can refer to one.
    const roll = posts.length === 0 ? 0 : random();
    const author = pick(citizens);
    if (roll < MIX.post + MIX.reply) {
      const parent = roll >= MIX.post ? recent(posts) : null;
      const id = `post_${seq.toString(36).padStart(8, '0')}`;
      const data: PostCreatedData = {
        post_id: id,
        body: `${words(8 + Math.floor(random() * 24))} #${seq}`,
        mint: parent === null && random() < 0.3 ? pick(mints) : null,
        parent_id: parent?.id ?? null,
        tags: tagsOf(),
        root_id: parent ? (parent.root ?? parent.id) : null,
        parent_author_id: parent?.author ?? null,
      };
      posts.push({ id, author, root: data.root_id });
      if (parent) world.replies += 1;
      else world.posts += 1;
      return { ...base, type: 'PostCreated', actor: author, data: { ...data } };
    }
    const post = recent(posts);
    if (post.author === author) return next(seq);
    if (roll < MIX.post + MIX.reply + MIX.vote) {
      const key = `${author}|${post.id}`;
      const previous = votes.get(key) ?? 0;
      const value: 1 | -1 = previous === 0 ? (random() < 0.8 ? 1 : -1) : (-previous as 1 | -1);
      votes.set(key, value);
      world.votes += 1;
      const data: VoteCastData = { post_id: post.id, author_id: post.author, value, previous };
      return { ...base, type: 'VoteCast', actor: author, data: { ...data } };
    }
    world.flags += 1;
    const data: PostFlaggedData = { post_id: post.id, author_id: post.author, reason: `looks like ${words(2)}` };
    return { ...base, type: 'PostFlagged', actor: author, data: { ...data } };
  };

  let prev = GENESIS_HASH;
  for (let from = 0; from < entries; from += INSERT_ROWS) {
    const revisions: number[] = [];
    const ids: string[] = [];
    const types: string[] = [];
    const datas: string[] = [];
    for (let seq = from; seq < Math.min(entries, from + INSERT_ROWS); seq += 1) {
      const sealed = sealAndEncode(prev, next(seq));
      prev = sealed.entry.hash;
      revisions.push(seq);
      ids.push(randomUUID());
      types.push(sealed.entry.type);
      datas.push(sealed.bytes);
      world.bytes += Buffer.byteLength(sealed.bytes);
    }
    await sql`insert into es.events (stream, revision, event_id, type, data)
      select ${LEDGER_STREAM}, r, i, t, d
      from unnest(${revisions}::bigint[], ${ids}::uuid[], ${types}::text[], ${datas}::text[]) as e(r, i, t, d)`.execute(db);
  }
  world.entries = entries;
  await sql`analyze es.events`.execute(db);
  return world;
}
