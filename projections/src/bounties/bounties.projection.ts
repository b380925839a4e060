import { sql } from 'kysely';
import { untrustedMark, untrustedOfEntry, type BountyAwardedData } from '@svc/domain';
import { sqlMigration } from '@svc/readmodel';
import { defineProjection, insertRows, unnestRows } from '../projection';
import { markColumn, untrustedColumnMigration } from '../untrusted';

/** Bounties with their status, and their submissions in order. */
export const bountiesProjection = defineProjection({
  name: 'bounties',
  canHandle: ['BountyPosted', 'BountySubmitted', 'BountyAwarded'],
  migrations: [
    sqlMigration('bounties_001', (schema) => [
      `create table ${schema}.bounties (
         bounty_id text primary key,
         poster_id text not null,
         title text not null,
         body text not null,
         reward_sol double precision not null,
         mint text,
         status text not null,
         submission_count integer not null default 0,
         winner_id text,
         awarded_submission_id text,
         award_signature text,
         awarded_at bigint,
         created_at bigint not null,
         seq bigint not null unique,
         hash text not null)`,
      `create index bounties_status on ${schema}.bounties (status, seq desc)`,
      `create index bounties_newest on ${schema}.bounties (seq desc)`,
      `create index bounties_poster on ${schema}.bounties (poster_id, seq desc)`,
      `create table ${schema}.submissions (
         submission_id text primary key,
         bounty_id text not null,
         submitter_id text not null,
         body text not null,
         created_at bigint not null,
         seq bigint not null unique,
         hash text not null)`,
      `create index submissions_bounty on ${schema}.submissions (bounty_id, seq)`,
    ]),
    untrustedColumnMigration('bounties_002', 'bounties', 'bounty_id', ['title', 'body'], (row) => untrustedMark(String(row.title), String(row.body))),
    untrustedColumnMigration('bounties_003', 'submissions', 'submission_id', ['body'], (row) => untrustedMark(String(row.body))),
  ],
  async apply(trx, schema, entries) {
    const posted = [];
    const submitted = [];
    // The last award of a bounty in the batch is the one its row keeps.
    const awarded = new Map<string, { data: BountyAwardedData; at: number }>();
    for (const { entry } of entries) {
      switch (entry.type) {
        case 'BountyPosted': {
          const d = entry.data;
          posted.push({ bounty_id: d.bounty_id, poster_id: entry.actor, title: d.title, body: d.body, untrusted: markColumn(untrustedOfEntry(entry.type, d)), reward_sol: d.reward_sol, mint: d.mint, status: 'open', created_at: entry.at, seq: entry.seq, hash: entry.hash });
          break;
        }
        case 'BountySubmitted': {
          const d = entry.data;
          submitted.push({ submission_id: d.submission_id, bounty_id: d.bounty_id, submitter_id: entry.actor, body: d.body, untrusted: markColumn(untrustedOfEntry(entry.type, d)), created_at: entry.at, seq: entry.seq, hash: entry.hash });
          break;
        }
        case 'BountyAwarded':
          awarded.set(entry.data.bounty_id, { data: entry.data, at: entry.at });
          break;
        default: {
          const never: never = entry;
          return never;
        }
      }
    }
    const s = sql.raw(schema);
    if (posted.length > 0) {
      const columns = { bounty_id: 'text', poster_id: 'text', title: 'text', body: 'text', untrusted: 'jsonb', reward_sol: 'double precision', mint: 'text', status: 'text', created_at: 'bigint', seq: 'bigint', hash: 'text' } as const;
      await sql`${insertRows(`${schema}.bounties`, posted, columns)} on conflict (bounty_id) do nothing`.execute(trx);
    }
    if (submitted.length > 0) {
      // A count moves by the submissions this batch added, and only those (rows are never deleted), so a batch
      // applied twice adds nothing the second time.
      const columns = { submission_id: 'text', bounty_id: 'text', submitter_id: 'text', body: 'text', untrusted: 'jsonb', created_at: 'bigint', seq: 'bigint', hash: 'text' } as const;
      await sql`
        with added as (${insertRows(`${schema}.submissions`, submitted, columns)} on conflict (submission_id) do nothing returning bounty_id)
        update ${s}.bounties b set submission_count = b.submission_count + n.added
        from (select bounty_id, count(*)::int as added from added group by bounty_id) n
        where b.bounty_id = n.bounty_id`.execute(trx);
    }
    if (awarded.size > 0) {
      const awards = [...awarded.values()].map(({ data, at }) => ({ bounty_id: data.bounty_id, winner_id: data.winner_id, submission_id: data.submission_id, signature: data.signature, at }));
      await sql`
        update ${s}.bounties b set status = 'awarded', winner_id = a.winner_id, awarded_submission_id = a.submission_id, award_signature = a.signature, awarded_at = a.at
        from ${unnestRows(awards, { bounty_id: 'text', winner_id: 'text', submission_id: 'text', signature: 'text', at: 'bigint' }, 'a')}
        where b.bounty_id = a.bounty_id`.execute(trx);
    }
  },
});
