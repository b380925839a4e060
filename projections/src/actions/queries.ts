import { sql, type Kysely } from 'kysely';
import { WRAPPED_SOL } from '../tokens/trades';

export interface ActionView {
  seq: number;
  at: number;
  agent: { id: string; handle: string | null };
  action: string;
  signature: string;
  wallet: string;
  details: Record<string, unknown>;
  hash: string;
}

function toAction(row: any): ActionView {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    agent: { id: row.agent_id, handle: row.handle ?? null },
    action: row.action,
    signature: row.signature,
    wallet: row.wallet,
    details: typeof row.details === 'string' ? JSON.parse(row.details) : row.details,
    hash: row.hash,
  };
}

/**
 * Newest first; `beforeSeq` continues from the previous page; `agentId` narrows to one citizen, `mint` to one
 * coin's actions, and `afterSeq` to the actions after a point of the ledger.
 */
export async function listActions(
  db: Kysely<any>,
  schema: string,
  options: { agentId?: string; mint?: string; beforeSeq?: number; afterSeq?: number; limit: number },
): Promise<ActionView[]> {
  let query = db
    .selectFrom(`${schema}.actions as x`)
    .leftJoin(`${schema}.agents as a`, 'a.agent_id', 'x.agent_id')
    .selectAll('x')
    .select('a.handle')
    .orderBy('x.seq', 'desc')
    .limit(options.limit);
  if (options.agentId !== undefined) query = query.where('x.agent_id', '=', options.agentId);
  const { mint } = options;
  // Wrapped SOL is one side of nearly every swap: as a coin it has only the actions that name it as `mint`.
  if (mint === WRAPPED_SOL) query = query.where(sql`x.details->>'mint'`, '=', mint);
  else if (mint !== undefined) {
    query = query.where((eb) => eb.or([eb(sql`x.details->>'mint'`, '=', mint), eb(sql`x.details->>'input_mint'`, '=', mint), eb(sql`x.details->>'output_mint'`, '=', mint)]));
  }
  if (options.beforeSeq !== undefined) query = query.where('x.seq', '<', options.beforeSeq);
  if (options.afterSeq !== undefined) query = query.where('x.seq', '>', options.afterSeq);
  return (await query.execute()).map(toAction);
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
