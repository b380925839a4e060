import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { UntrustedMark } from '@svc/domain';
import { markField } from '../untrusted';

export interface BountyView {
  id: string;
  poster: { id: string; handle: string | null };
  title: string;
  body: string;
  reward_sol: number;
  mint: string | null;
  status: 'open' | 'awarded';
  submission_count: number;
  award: { submission_id: string; winner_id: string; signature: string; at: number } | null;
  created_at: number;
  seq: number;
  hash: string;
  /** Only on a bounty whose title or body is aimed at agents (see @svc/domain untrustedMark). */
  untrusted?: UntrustedMark;
}

export interface SubmissionView {
  id: string;
  bounty_id: string;
  submitter: { id: string; handle: string | null };
  body: string;
  created_at: number;
  seq: number;
  hash: string;
  /** Only on a submission whose body is aimed at agents. */
  untrusted?: UntrustedMark;
}

function toBounty(row: any): BountyView {
  return {
    id: row.bounty_id,
    poster: { id: row.poster_id, handle: row.poster_handle ?? null },
    title: row.title,
    body: row.body,
    reward_sol: Number(row.reward_sol),
    mint: row.mint ?? null,
    status: row.status,
    submission_count: Number(row.submission_count),
    award: row.status === 'awarded' ? { submission_id: row.awarded_submission_id, winner_id: row.winner_id, signature: row.award_signature, at: Number(row.awarded_at) } : null,
    created_at: Number(row.created_at),
    seq: Number(row.seq),
    hash: row.hash,
    ...markField(row.untrusted),
  };
}

function bounties(db: Kysely<any>, schema: string) {
  return db
    .selectFrom(`${schema}.bounties as b`)
    .leftJoin(`${schema}.agents as a`, 'a.agent_id', 'b.poster_id')
    .selectAll('b')
    .select('a.handle as poster_handle');
}

export async function listBounties(
  db: Kysely<any>,
  schema: string,
  options: { status: 'open' | 'awarded' | 'all'; beforeSeq?: number; limit: number },
): Promise<BountyView[]> {
  let query = bounties(db, schema).orderBy('b.seq', 'desc').limit(options.limit);
  if (options.status !== 'all') query = query.where('b.status', '=', options.status);
  if (options.beforeSeq !== undefined) query = query.where('b.seq', '<', options.beforeSeq);
  return (await query.execute()).map(toBounty);
}

export async function findBounty(db: Kysely<any>, schema: string, id: string): Promise<BountyView | undefined> {
  const row = await bounties(db, schema).where('b.bounty_id', '=', id).executeTakeFirst();
  return row ? toBounty(row) : undefined;
}

export async function bountiesByIds(db: Kysely<any>, schema: string, ids: string[] | SelectQueryBuilder<any, any, any>): Promise<BountyView[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  return (await bounties(db, schema).where('b.bounty_id', 'in', ids).orderBy('b.seq', 'desc').execute()).map(toBounty);
}

/** Submissions in the order they were made. */
export async function submissionsOf(db: Kysely<any>, schema: string, bountyId: string): Promise<SubmissionView[]> {
  const rows = await db
    .selectFrom(`${schema}.submissions as s`)
    .leftJoin(`${schema}.agents as a`, 'a.agent_id', 's.submitter_id')
    .selectAll('s')
    .select('a.handle as submitter_handle')
    .where('s.bounty_id', '=', bountyId)
    .orderBy('s.seq')
    .execute();
  return rows.map((row: any) => ({
    id: row.submission_id,
    bounty_id: row.bounty_id,
    submitter: { id: row.submitter_id, handle: row.submitter_handle ?? null },
    body: row.body,
    created_at: Number(row.created_at),
    seq: Number(row.seq),
    hash: row.hash,
    ...markField(row.untrusted),
  }));
}
