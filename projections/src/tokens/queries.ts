import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { UntrustedMark } from '@svc/domain';
import { markField } from '../untrusted';

export interface FeeShareView {
  status: string;
  shares: Array<{ address: string; share_bps: number }>;
  signature: string | null;
}

/** A coin deployed through the service, as the ledger tells it. */
export interface TokenView {
  mint: string;
  name: string;
  symbol: string;
  description: string | null;
  image: string | null;
  metadata_uri: string | null;
  links: Record<string, string>;
  bonding_curve: string | null;
  creator: string | null;
  mayhem: boolean;
  holder_reward: boolean;
  dev_buy: Record<string, unknown>;
  fee_share: FeeShareView;
  deployed_by: { agent_id: string; handle: string | null };
  wallet: string;
  deployed_at: number;
  seq: number;
  signature: string;
  trades: { buys: number; sells: number; buy_volume_sol: number; sell_volume_sol: number; last_trade_at: number | null };
  /** The ledger position of the last action that named the coin (its deploy at least). */
  last_action_seq: number;
  /** Only on a coin whose name, symbol or description is aimed at agents (see @svc/domain untrustedMark). */
  untrusted?: UntrustedMark;
}

const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

function toView(row: any): TokenView {
  return {
    mint: row.mint,
    name: row.name,
    symbol: row.symbol,
    description: row.description ?? null,
    image: row.image ?? null,
    metadata_uri: row.metadata_uri ?? null,
    links: json(row.links),
    bonding_curve: row.bonding_curve ?? null,
    creator: row.creator ?? null,
    mayhem: row.mayhem,
    holder_reward: row.holder_reward,
    dev_buy: json(row.dev_buy),
    fee_share: { status: row.fee_share_status, shares: json(row.fee_share_shares), signature: row.fee_share_signature ?? null },
    deployed_by: { agent_id: row.agent_id, handle: row.handle ?? null },
    wallet: row.wallet,
    deployed_at: Number(row.deployed_at),
    seq: Number(row.seq),
    signature: row.signature,
    trades: {
      buys: Number(row.buys),
      sells: Number(row.sells),
      buy_volume_sol: Number(row.buy_volume_sol),
      sell_volume_sol: Number(row.sell_volume_sol),
      last_trade_at: row.last_trade_at === null ? null : Number(row.last_trade_at),
    },
    last_action_seq: Math.max(Number(row.seq), Number(row.last_action_seq ?? -1)),
    ...markField(row.untrusted),
  };
}

function tokens(db: Kysely<any>, schema: string) {
  return db
    .selectFrom(`${schema}.tokens as t`)
    .leftJoin(`${schema}.agents as a`, 'a.agent_id', 't.agent_id')
    .selectAll('t')
    .select('a.handle')
    .select(sql<number>`(select max(m.last_seq) from ${sql.raw(schema)}.agent_mints m where m.mint = t.mint)`.as('last_action_seq'));
}

/** Newest first; `beforeSeq` continues from the last coin of the previous page. */
export async function listTokens(db: Kysely<any>, schema: string, options: { beforeSeq?: number; limit: number }): Promise<TokenView[]> {
  let query = tokens(db, schema).orderBy('t.seq', 'desc').limit(options.limit);
  if (options.beforeSeq !== undefined) query = query.where('t.seq', '<', options.beforeSeq);
  return (await query.execute()).map(toView);
}

export async function findToken(db: Kysely<any>, schema: string, mint: string): Promise<TokenView | undefined> {
  const row = await tokens(db, schema).where('t.mint', '=', mint).executeTakeFirst();
  return row ? toView(row) : undefined;
}

/** The coins a citizen deployed, newest first. */
export async function tokensByDeployer(db: Kysely<any>, schema: string, agentId: string, limit: number): Promise<TokenView[]> {
  return (await tokens(db, schema).where('t.agent_id', '=', agentId).orderBy('t.seq', 'desc').limit(limit).execute()).map(toView);
}

/** The coins among `mints` (a list or a subquery of mints), newest first. */
export async function tokensByMints(db: Kysely<any>, schema: string, mints: string[] | SelectQueryBuilder<any, any, any>): Promise<TokenView[]> {
  if (Array.isArray(mints) && mints.length === 0) return [];
  return (await tokens(db, schema).where('t.mint', 'in', mints).orderBy('t.seq', 'desc').execute()).map(toView);
}

export async function countTokens(db: Kysely<any>, schema: string): Promise<number> {
  const row = await db.selectFrom(`${schema}.tokens`).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Every coin deployed through the service, for the market refresher. */
export async function allMints(db: Kysely<any>, schema: string): Promise<string[]> {
  return (await db.selectFrom(`${schema}.tokens`).select('mint').orderBy('seq', 'desc').execute()).map((r) => r.mint as string);
}

/** The ledger position of the last action that named `mint`; -1 when none did. */
export async function lastActionSeq(db: Kysely<any>, schema: string, mint: string): Promise<number> {
  const row = await db.selectFrom(`${schema}.agent_mints`).select((eb) => eb.fn.max('last_seq').as('seq')).where('mint', '=', mint).executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? -1 : Number(row.seq);
}

/** The latest sharing record of a coin, deployed here or not. */
export async function feeShareOf(db: Kysely<any>, schema: string, mint: string): Promise<FeeShareView | undefined> {
  const row = await db.selectFrom(`${schema}.token_fee_shares`).selectAll().where('mint', '=', mint).executeTakeFirst();
  return row ? { status: row.status, shares: json(row.shares), signature: row.signature } : undefined;
}

/** A coin a citizen's recorded actions touched, and the ledger position of the last such action. */
export interface HeldPair {
  agent_id: string;
  mint: string;
  last_seq: number;
}

/** Every (citizen, coin) pair the ledger knows of: one token account each for the pricing worker to read. */
export async function heldPairs(db: Kysely<any>, schema: string): Promise<HeldPair[]> {
  const rows = await db.selectFrom(`${schema}.agent_mints`).select(['agent_id', 'mint', 'last_seq']).execute();
  return rows.map((r) => ({ agent_id: r.agent_id as string, mint: r.mint as string, last_seq: Number(r.last_seq) }));
}

/** A citizen and a coin its actions touched: a token account it may hold. */
export interface HeldMint {
  agent_id: string;
  wallet: string;
  mint: string;
}

/** The (citizen, coin) pairs the ledger knows of, most recently active first, at most `limit`. */
export async function heldMints(db: Kysely<any>, schema: string, limit: number): Promise<HeldMint[]> {
  const rows = await db
    .selectFrom(`${schema}.agent_mints as m`)
    .innerJoin(`${schema}.agents as a`, 'a.agent_id', 'm.agent_id')
    .select(['m.agent_id', 'a.wallet', 'm.mint'])
    .orderBy('m.last_seq', 'desc')
    .limit(limit)
    .execute();
  return rows as HeldMint[];
}

/** A coin whose creator fees may reach a citizen. */
export interface CreatorCoin {
  mint: string;
  /** Null for a coin deployed elsewhere. */
  symbol: string | null;
}

/**
 * The coins whose creator fees a citizen earns, newest first, at most `limit`: those it deployed here, and those
 * it opted into sharing with its wallet among the shareholders (a coin launched elsewhere, shared through the service).
 */
export async function creatorCoins(db: Kysely<any>, schema: string, agentId: string, wallet: string, limit: number): Promise<CreatorCoin[]> {
  const s = sql.raw(schema);
  const holder = JSON.stringify([{ address: wallet }]);
  const { rows } = await sql<{ mint: string; symbol: string | null }>`
    select c.mint, c.symbol from (
      select t.mint, t.symbol, t.seq from ${s}.tokens t where t.agent_id = ${agentId}
      union all
      select f.mint, null::text as symbol, f.seq
      from ${s}.agent_mints m
      join ${s}.token_fee_shares f on f.mint = m.mint
      where m.agent_id = ${agentId}
        and f.shares @> ${holder}::jsonb
        and not exists (select 1 from ${s}.tokens t where t.mint = f.mint and t.agent_id = ${agentId})
    ) c
    order by c.seq desc
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ mint: r.mint, symbol: r.symbol ?? null }));
}
