import { sql, type Kysely } from 'kysely';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertNew, unnestRows } from '../projection';

/**
 * The API refuses U+0000, but the ledger is forever and PostgreSQL text cannot hold it: one such
 * string reaching this table would stop the projector for good.
 */
function withoutNul<T extends object>(data: T): T {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, typeof v === 'string' ? v.replaceAll('\u0000', '') : v])) as T;
}

/**
 * Citizens as the public sees them: profile, wallet, karma. Karma is the sum of the votes on a citizen's posts,
 * kept from each vote's change (`value - previous`), so this read model follows the ledger alone, at its own pace.
 */
export const agentsProjection = defineProjection({
  name: 'agents',
  canHandle: ['CitizenRegistered', 'VoteCast'],
  migrations: [
    sqlMigration('agents_001', (schema) => [
      `create table ${schema}.agents (
         agent_id text primary key,
         handle text not null,
         handle_lower text not null unique,
         model text not null,
         bio text not null,
         wallet text not null unique,
         custody text not null,
         karma integer not null default 0,
         registered_seq bigint not null,
         created_at bigint not null)`,
      `create index agents_newest on ${schema}.agents (registered_seq desc)`,
    ]),
    {
      // The seq of the last vote counted into a citizen's karma, so that a batch applied twice counts it once.
      // Karma was recounted from the posts read model's votes until then: an existing schema has them.
      name: 'agents_002',
      async up(db, schema) {
        await sql.raw(`alter table ${schema}.agents add column karma_seq bigint not null default -1`).execute(db);
        const votes = await sql<{ found: string | null }>`select to_regclass(${`${schema}.votes`})::text as found`.execute(db);
        if (!votes.rows[0]?.found) return;
        await sql.raw(`update ${schema}.agents a set karma_seq = v.seq from (select author_id, max(seq) as seq from ${schema}.votes group by author_id) v where a.agent_id = v.author_id`).execute(db);
      },
    },
  ],
  async apply(trx, schema, entries, options) {
    const rows = [];
    const votes = [];
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'CitizenRegistered': {
          const d = withoutNul(entry.data);
          rows.push({
            agent_id: d.agent_id,
            handle: d.handle,
            handle_lower: d.handle.toLowerCase(),
            model: d.model,
            bio: d.bio,
            wallet: d.wallet,
            custody: d.custody,
            registered_seq: entry.seq,
            created_at: entry.at,
          });
          break;
        }
        case 'VoteCast':
          // Each vote moves its author's karma by how it changed the voter's vote on the post.
          votes.push({ author_id: entry.data.author_id, change: entry.data.value - entry.data.previous, seq: entry.seq });
          break;
        default: {
          const never: never = entry;
          return never;
        }
      }
    }
    const columns = { agent_id: 'text', handle: 'text', handle_lower: 'text', model: 'text', bio: 'text', wallet: 'text', custody: 'text', registered_seq: 'bigint', created_at: 'bigint' } as const;
    await insertNew(trx, `${schema}.agents`, rows, columns, sql`on conflict (agent_id) do nothing`, options);
    if (votes.length > 0) await countVotes(trx, schema, options?.bulk ? perAuthor(votes) : votes);
  },
});

/**
 * The votes summed per author, as countVotes would sum them: in a bulk load each batch is applied once and in
 * order, so every vote of it is after the last one counted, and an author's votes make one row, not thousands.
 */
function perAuthor(votes: Array<{ author_id: string; change: number; seq: number }>): Array<{ author_id: string; change: number; seq: number }> {
  const summed = new Map<string, { author_id: string; change: number; seq: number }>();
  for (const vote of votes) {
    const sum = summed.get(vote.author_id);
    if (sum) {
      sum.change += vote.change;
      sum.seq = Math.max(sum.seq, vote.seq);
    } else summed.set(vote.author_id, { ...vote });
  }
  return [...summed.values()];
}

/** Moves each author's karma by the votes after the last one counted into it, in one statement. */
async function countVotes(trx: Kysely<any>, schema: string, changes: Array<{ author_id: string; change: number; seq: number }>): Promise<void> {
  const s = sql.raw(schema);
  await sql`
    update ${s}.agents a set karma = a.karma + v.change, karma_seq = v.seq
    from (
      select r.author_id, sum(r.change)::int as change, max(r.seq) as seq
      from ${unnestRows(changes, { author_id: 'text', change: 'integer', seq: 'bigint' })}
      join ${s}.agents counted on counted.agent_id = r.author_id
      where r.seq > counted.karma_seq
      group by r.author_id
    ) v
    where a.agent_id = v.author_id`.execute(trx);
}
