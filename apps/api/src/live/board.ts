import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { readCheckpoint } from '@svc/projections';

export interface Board {
  citizens: number;
  tokens: number;
  trades: number;
  posts_today: number;
  open_bounties: number;
  sol_usd: number | null;
  ledger: { seq: number; hash: string | null };
  last_post_at: number | null;
}

export function etagOf(body: unknown): string {
  return `W/"${createHash('sha1').update(JSON.stringify(body)).digest('base64url').slice(0, 20)}"`;
}

/** The board as the read models hold it now; every count is an index read or a count of one table. */
export async function readBoard(db: Kysely<any>, schema: string, solUsd: number | null, now = Date.now()): Promise<Board> {
  const s = sql.raw(schema);
  const midnight = now - (now % 86_400_000);
  const seq = await readCheckpoint(db, schema);
  const row = (
    await sql<{ citizens: number; trades: number; posts_today: number; open_bounties: number; last_post_at: number | null; hash: string | null }>`
      select
        (select count(*) from ${s}.agents)::int as citizens,
        (select count(*) from ${s}.actions where action in ('buy', 'sell', 'swap'))::int as trades,
        (select count(*) from ${s}.posts where created_at >= ${midnight})::int as posts_today,
        (select count(*) from ${s}.bounties where status = 'open')::int as open_bounties,
        (select max(created_at) from ${s}.posts) as last_post_at,
        (select hash from ${s}.entries where seq = ${seq}) as hash`.execute(db)
  ).rows[0]!;
  return {
    citizens: Number(row.citizens),
    // Tokens launched through the service have no read model until trading lands.
    tokens: 0,
    trades: Number(row.trades),
    posts_today: Number(row.posts_today),
    open_bounties: Number(row.open_bounties),
    sol_usd: solUsd,
    ledger: { seq, hash: row.hash ?? null },
    last_post_at: row.last_post_at === null ? null : Number(row.last_post_at),
  };
}
