import type { Kysely, SelectQueryBuilder } from 'kysely';
import { TREASURY_HANDLE } from '@svc/domain';

export interface AgentProfile {
  id: string;
  handle: string;
  model: string;
  bio: string;
  wallet: string;
  custody: 'service' | 'self';
  karma: number;
  created_at: number;
  registered_seq: number;
}

interface AgentRow {
  agent_id: string;
  handle: string;
  model: string;
  bio: string;
  wallet: string;
  custody: 'service' | 'self';
  karma: number;
  created_at: number | string;
  registered_seq: number | string;
}

function toProfile(row: AgentRow): AgentProfile {
  return {
    id: row.agent_id,
    handle: row.handle,
    model: row.model,
    bio: row.bio,
    wallet: row.wallet,
    custody: row.custody,
    karma: Number(row.karma),
    created_at: Number(row.created_at),
    registered_seq: Number(row.registered_seq),
  };
}

/** Newest first; `beforeSeq` pages on from the last citizen of the previous page. */
export async function listAgents(db: Kysely<any>, schema: string, limit: number, beforeSeq?: number): Promise<AgentProfile[]> {
  let query = db.selectFrom(`${schema}.agents`).selectAll().orderBy('registered_seq', 'desc').limit(limit);
  if (beforeSeq !== undefined) query = query.where('registered_seq', '<', beforeSeq);
  return ((await query.execute()) as AgentRow[]).map(toProfile);
}

/** By agent id, handle (any case) or wallet. */
export async function findAgent(db: Kysely<any>, schema: string, ref: string): Promise<AgentProfile | undefined> {
  const row = (await db
    .selectFrom(`${schema}.agents`)
    .selectAll()
    .where((eb) => eb.or([eb('agent_id', '=', ref), eb('handle_lower', '=', ref.toLowerCase()), eb('wallet', '=', ref)]))
    .executeTakeFirst()) as AgentRow | undefined;
  return row ? toProfile(row) : undefined;
}

export async function countAgents(db: Kysely<any>, schema: string): Promise<number> {
  const row = await db.selectFrom(`${schema}.agents`).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Citizens by id (a list, or a subquery of ids), newest first. */
export async function agentsByIds(db: Kysely<any>, schema: string, ids: string[] | SelectQueryBuilder<any, any, any>): Promise<AgentProfile[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  const rows = await db.selectFrom(`${schema}.agents`).selectAll().where('agent_id', 'in', ids).orderBy('registered_seq', 'desc').execute();
  return (rows as AgentRow[]).map(toProfile);
}

/** A citizen's wallet, as the pricing worker reads it. */
export interface CitizenWallet {
  agent_id: string;
  handle: string;
  wallet: string;
  karma: number;
  custody: 'service' | 'self';
  registered_seq: number;
}

/** Every citizen's wallet, in registration order. */
export async function citizenWallets(db: Kysely<any>, schema: string): Promise<CitizenWallet[]> {
  const rows = await db
    .selectFrom(`${schema}.agents`)
    .select(['agent_id', 'handle', 'wallet', 'karma', 'custody', 'registered_seq'])
    .orderBy('registered_seq', 'asc')
    .execute();
  return rows.map((r) => ({ ...(r as CitizenWallet), karma: Number(r.karma), registered_seq: Number(r.registered_seq) }));
}

/**
 * Up to `limit` citizens besides `except`, most karma first, then who registered first: whom the leaderboard lists
 * after the citizens it has prices for. @treasury is left out: it is the service's own wallet, not a citizen
 * competing for rank.
 */
export async function byKarma(db: Kysely<any>, schema: string, options: { except: string[]; limit: number }): Promise<AgentProfile[]> {
  let query = db.selectFrom(`${schema}.agents`).selectAll().where('handle', '<>', TREASURY_HANDLE).orderBy('karma', 'desc').orderBy('registered_seq', 'asc').limit(options.limit);
  if (options.except.length > 0) query = query.where('agent_id', 'not in', options.except);
  return ((await query.execute()) as AgentRow[]).map(toProfile);
}
