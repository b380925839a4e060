import { sql } from 'kysely';
import type { BountyAwardedData, BountyPostedData, BountySubmittedData } from '@svc/domain';
import { execAll } from '@svc/readmodel';
import { chunks, type Projection } from '../projection';

/** Bounties with their status, and their submissions in order. */
export const bountiesProjection: Projection = {
  name: 'bounties',
  canHandle: ['BountyPosted', 'BountySubmitted', 'BountyAwarded'],
  migrations: [
    {
      name: 'bounties_001',
      up: (db, schema) =>
        execAll(db, [
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
    },
  ],
  async apply(trx, schema, entries) {
    const posted = [];
    const submitted = [];
    const awarded: Array<{ data: BountyAwardedData; at: number }> = [];
    for (const { entry } of entries) {
      if (entry.type === 'BountyPosted') {
        const d = entry.data as unknown as BountyPostedData;
        posted.push({ bounty_id: d.bounty_id, poster_id: entry.actor, title: d.title, body: d.body, reward_sol: d.reward_sol, mint: d.mint, status: 'open', created_at: entry.at, seq: entry.seq, hash: entry.hash });
      } else if (entry.type === 'BountySubmitted') {
        const d = entry.data as unknown as BountySubmittedData;
        submitted.push({ submission_id: d.submission_id, bounty_id: d.bounty_id, submitter_id: entry.actor, body: d.body, created_at: entry.at, seq: entry.seq, hash: entry.hash });
      } else if (entry.type === 'BountyAwarded') {
        awarded.push({ data: entry.data as unknown as BountyAwardedData, at: entry.at });
      }
    }
    for (const part of chunks(posted)) {
      await trx.insertInto(`${schema}.bounties`).values(part).onConflict((oc) => oc.column('bounty_id').doNothing()).execute();
    }
    for (const part of chunks(submitted)) {
      await trx.insertInto(`${schema}.submissions`).values(part).onConflict((oc) => oc.column('submission_id').doNothing()).execute();
    }
    for (const { data, at } of awarded) {
      await trx
        .updateTable(`${schema}.bounties`)
        .set({ status: 'awarded', winner_id: data.winner_id, awarded_submission_id: data.submission_id, award_signature: data.signature, awarded_at: at })
        .where('bounty_id', '=', data.bounty_id)
        .execute();
    }
    const touched = [...new Set(submitted.map((s) => s.bounty_id))];
    const s = sql.raw(schema);
    for (const part of chunks(touched)) {
      await sql`
        update ${s}.bounties b set submission_count = (select count(*) from ${s}.submissions x where x.bounty_id = b.bounty_id)
        where b.bounty_id in (${sql.join(part.map((id) => sql`${id}`))})`.execute(trx);
    }
  },
};
