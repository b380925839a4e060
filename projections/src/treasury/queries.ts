import { sql, type Kysely } from 'kysely';

/** The treasury's running totals as the ledger has them; amounts in lamports and token base units. */
export interface TreasuryTotals {
  agent_id: string | null;
  wallet: string | null;
  /** The last ledger entry counted. */
  seq: number;
  fees_received_lamports: bigint;
  sol_spent_lamports: bigint;
  tokens_bought_raw: bigint;
  tokens_burned_raw: bigint;
  /** Decimals of the service token, from the latest buyback or burn; null before any. */
  token_decimals: number | null;
  distributions: number;
  buybacks: number;
  burns: number;
}

export async function totals(db: Kysely<any>, schema: string): Promise<TreasuryTotals> {
  const row = (await db.selectFrom(`${schema}.treasury_totals`).selectAll().where('id', '=', 'main').executeTakeFirst())!;
  return {
    agent_id: row.agent_id,
    wallet: row.wallet,
    seq: Number(row.last_seq),
    fees_received_lamports: BigInt(row.fees_received_lamports),
    sol_spent_lamports: BigInt(row.sol_spent_lamports),
    tokens_bought_raw: BigInt(row.tokens_bought_raw),
    tokens_burned_raw: BigInt(row.tokens_burned_raw),
    token_decimals: row.token_decimals === null ? null : Number(row.token_decimals),
    distributions: Number(row.distributions),
    buybacks: Number(row.buybacks),
    burns: Number(row.burns),
  };
}

/** One treasury transaction as GET /treasury lists it. */
export interface TreasuryActionRow {
  seq: number;
  at: number;
  action: string;
  signature: string;
  mint: string | null;
  received_lamports: bigint;
  spent_lamports: bigint;
  bought_raw: bigint;
  burned_raw: bigint;
  details: Record<string, unknown>;
}

/** The treasury's latest transactions, newest first. */
export async function recentActions(db: Kysely<any>, schema: string, limit: number): Promise<TreasuryActionRow[]> {
  const rows = await db.selectFrom(`${schema}.treasury_actions`).selectAll().orderBy('seq', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    at: Number(row.at),
    action: row.action,
    signature: row.signature,
    mint: row.mint,
    received_lamports: BigInt(row.received_lamports),
    spent_lamports: BigInt(row.spent_lamports),
    bought_raw: BigInt(row.bought_raw),
    burned_raw: BigInt(row.burned_raw),
    details: typeof row.details === 'string' ? JSON.parse(row.details) : row.details,
  }));
}

/** A coin whose creator fees are shared with `wallet`, and that wallet's share. */
export interface SharingCoin {
  mint: string;
  share_bps: number;
}

/** Coins whose active fee-sharing config (token_fee_shares, from the ledger's fee_share actions) pays `wallet`. */
export async function sharingCoins(db: Kysely<any>, schema: string, wallet: string): Promise<SharingCoin[]> {
  const rows = await sql<{ mint: string; shares: unknown }>`
    select mint, shares from ${sql.raw(schema)}.token_fee_shares
     where status = 'active' and shares @> ${JSON.stringify([{ address: wallet }])}::jsonb
     order by seq`.execute(db);
  return rows.rows.map((row) => {
    const shares = (typeof row.shares === 'string' ? JSON.parse(row.shares) : row.shares) as Array<{ address: string; share_bps: number }>;
    return { mint: row.mint, share_bps: shares.filter((s) => s.address === wallet).reduce((sum, s) => sum + Number(s.share_bps), 0) };
  });
}

export async function countSharingCoins(db: Kysely<any>, schema: string, wallet: string): Promise<number> {
  const row = await sql<{ n: string | number }>`
    select count(*) as n from ${sql.raw(schema)}.token_fee_shares
     where status = 'active' and shares @> ${JSON.stringify([{ address: wallet }])}::jsonb`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}
