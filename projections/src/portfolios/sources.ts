import type { Kysely } from 'kysely';

/** A citizen as the pricing worker needs it. */
export interface PricedCitizen {
  agent_id: string;
  handle: string;
  wallet: string;
  karma: number;
  custody: 'service' | 'self';
  registered_seq: number;
}

/** A coin a citizen's recorded actions touched, and the ledger position of the last such action. */
export interface HeldPair {
  agent_id: string;
  mint: string;
  last_seq: number;
}

/** Every citizen, in registration order. */
export async function citizens(db: Kysely<any>, schema: string): Promise<PricedCitizen[]> {
  const rows = await db
    .selectFrom(`${schema}.agents`)
    .select(['agent_id', 'handle', 'wallet', 'karma', 'custody', 'registered_seq'])
    .orderBy('registered_seq', 'asc')
    .execute();
  return rows.map((r) => ({ ...(r as PricedCitizen), karma: Number(r.karma), registered_seq: Number(r.registered_seq) }));
}

/** Every (citizen, coin) pair the ledger knows of: one token account each to read. */
export async function heldPairs(db: Kysely<any>, schema: string): Promise<HeldPair[]> {
  const rows = await db.selectFrom(`${schema}.agent_mints`).select(['agent_id', 'mint', 'last_seq']).execute();
  return rows.map((r) => ({ agent_id: r.agent_id as string, mint: r.mint as string, last_seq: Number(r.last_seq) }));
}

/**
 * By citizen: the ledger position of its last action that may have moved tokens the (citizen, coin) pairs do not
 * name: a `submit` (any transaction the citizen signed and sent through /tx/submit; its record names programs, not
 * mints). Only actions at or before `upTo`.
 */
export async function lastUnnamedTokenMoves(db: Kysely<any>, schema: string, upTo: number): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom(`${schema}.actions`)
    .select((eb) => ['agent_id', eb.fn.max('seq').as('seq')])
    .where('action', '=', 'submit')
    .where('seq', '<=', upTo)
    .groupBy('agent_id')
    .execute();
  return new Map(rows.map((r) => [r.agent_id as string, Number(r.seq)]));
}
