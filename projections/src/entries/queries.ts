import type { Kysely } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import type { EventKind } from '@svc/domain';

export type ServedEntry = LedgerEntry & { kind: EventKind };

function parse(row: { body: string; kind: string }): ServedEntry {
  return { ...(JSON.parse(row.body) as LedgerEntry), kind: row.kind as EventKind };
}

/** Entries in ledger order after `afterSeq`, or from time `since` (ms) when no seq is given. */
export async function entriesSince(
  db: Kysely<any>,
  schema: string,
  options: { afterSeq?: number; since?: number; upTo?: number; limit: number },
): Promise<ServedEntry[]> {
  let query = db.selectFrom(`${schema}.entries`).select(['body', 'kind']).orderBy('seq').limit(options.limit);
  if (options.upTo !== undefined) query = query.where('seq', '<=', options.upTo);
  if (options.afterSeq !== undefined) query = query.where('seq', '>', options.afterSeq);
  if (options.since !== undefined) query = query.where('at', '>=', options.since);
  return (await query.execute()).map(parse);
}

/** One citizen's entries in ledger order, after `afterSeq`. */
export async function entriesByActor(db: Kysely<any>, schema: string, actor: string, options: { afterSeq: number; limit: number }): Promise<ServedEntry[]> {
  const rows = await db
    .selectFrom(`${schema}.entries`)
    .select(['body', 'kind'])
    .where('actor', '=', actor)
    .where('seq', '>', options.afterSeq)
    .orderBy('seq')
    .limit(options.limit)
    .execute();
  return rows.map(parse);
}

export async function countEntriesByActor(db: Kysely<any>, schema: string, actor: string): Promise<number> {
  const row = await db
    .selectFrom(`${schema}.entries`)
    .select((eb) => eb.fn.countAll().as('n'))
    .where('actor', '=', actor)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The entry of `type` by `actor`, at or after `since` (ms), whose data names `id` under `field`: what an
 * earlier attempt of a retried request wrote. Walks only that citizen's entries of that type since then.
 */
export async function entryCreating(
  db: Kysely<any>,
  schema: string,
  find: { actor: string; type: string; since: number; field: string; id: string },
): Promise<LedgerEntry | undefined> {
  const rows = await db
    .selectFrom(`${schema}.entries`)
    .select(['body', 'kind'])
    .where('actor', '=', find.actor)
    .where('type', '=', find.type)
    .where('at', '>=', find.since)
    .orderBy('seq')
    .execute();
  return rows.map(parse).find((entry) => (entry.data as Record<string, unknown>)[find.field] === find.id);
}
