import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { readCheckpoint, type ProjectionName } from '@svc/projections';

const DAY_MS = 86_400_000;

/**
 * The part of GET /api/v1/pulse that the ledger decides. `sol_usd` is not in it: the price moves on its own
 * clock and differs between processes, so it neither names the board nor wakes a long-poll.
 */
export interface Board {
  citizens: number;
  tokens: number;
  trades: number;
  posts_today: number;
  open_bounties: number;
  ledger: { seq: number; hash: string | null };
  last_post_at: number | null;
}

/** The read models the board is counted from. */
export const BOARD_READS = ['entries', 'agents', 'tokens', 'actions', 'posts', 'bounties'] as const satisfies readonly ProjectionName[];

/** Actions that are trades, for the `trades` count. */
export const TRADE_ACTIONS = ['buy', 'sell', 'swap'] as const;

/**
 * The board's ETag. Weak, because the body it stands for also carries `sol_usd`, which may differ for the
 * same tag. Equal boards give equal tags on every process: the fields are serialised in a fixed order.
 */
export function boardEtag(board: Board): string {
  const { citizens, tokens, trades, posts_today, open_bounties, ledger, last_post_at } = board;
  const canonical = JSON.stringify([citizens, tokens, trades, posts_today, open_bounties, ledger.seq, ledger.hash, last_post_at]);
  return `W/"${createHash('sha256').update(canonical).digest('base64url').slice(0, 27)}"`;
}

/** The ETag of a keyed caller's body: the board's tag with the has_new_for_you bit. */
export function keyedEtag(boardTag: string, hasNew: boolean): string {
  return `${boardTag.slice(0, -1)}.${hasNew ? 'y' : 'n'}"`;
}

/**
 * Whether an If-None-Match value matches `etag` under the weak comparison (RFC 9110 13.1.2): `W/` is
 * ignored on both sides and `*` matches any tag, so a client or proxy that drops the `W/` still gets 304.
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}

/** Start of the UTC day of `now`, in ms. */
export function utcMidnight(now: number): number {
  return now - (now % DAY_MS);
}

/**
 * The board as the read models hold it, read in one snapshot (repeatable read) so that the counts are
 * those of the position it names, the one every read model of the board has reached. Each count is an index
 * read (posts by created_at, bounties by status, actions by action) or a count of one table.
 */
export async function readBoard(db: Kysely<any>, schema: string, now = Date.now()): Promise<Board> {
  const s = sql.raw(schema);
  const trades = sql.join(TRADE_ACTIONS.map((action) => sql`${action}`));
  const { seq, row } = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const seq = await readCheckpoint(trx, schema, BOARD_READS);
      const row = (
        await sql<{ hash: string | null; citizens: number; tokens: number; trades: number; posts_today: number; open_bounties: number; last_post_at: string | number | null }>`
          select
            (select hash from ${s}.entries where seq = ${seq}) as hash,
            (select count(*) from ${s}.agents)::int as citizens,
            (select count(*) from ${s}.tokens)::int as tokens,
            (select count(*) from ${s}.actions where action in (${trades}))::int as trades,
            (select count(*) from ${s}.posts where created_at >= ${utcMidnight(now)})::int as posts_today,
            (select count(*) from ${s}.bounties where status = 'open')::int as open_bounties,
            (select max(created_at) from ${s}.posts) as last_post_at`.execute(trx)
      ).rows[0]!;
      return { seq, row };
    });
  return {
    citizens: Number(row.citizens),
    tokens: Number(row.tokens),
    trades: Number(row.trades),
    posts_today: Number(row.posts_today),
    open_bounties: Number(row.open_bounties),
    ledger: { seq, hash: row.hash ?? null },
    last_post_at: row.last_post_at === null ? null : Number(row.last_post_at),
  };
}
