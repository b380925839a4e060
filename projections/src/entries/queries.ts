import type { Kysely } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import { untrustedOfEntry, type EventKind, type UntrustedMark } from '@svc/domain';

export type ServedEntry = LedgerEntry & { kind: EventKind; untrusted?: UntrustedMark };

/**
 * An entry as the ledger holds it, with its kind, and its mark when the citizen's words in it read as instructions
 * to an agent: marked as it is served, by the rules /ws frames use, since this read model keeps the exact bytes.
 */
function parse(row: { body: string; kind: string }): ServedEntry {
  const entry = JSON.parse(row.body) as LedgerEntry;
  const untrusted = untrustedOfEntry(entry.type, entry.data);
  return { ...entry, kind: row.kind as EventKind, ...(untrusted ? { untrusted } : {}) };
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

/**
 * The seq and kind of the entries after `afterSeq` in ledger order, at most `limit`, of `kinds` when given.
 * A query, not its rows: the doorbell fan-out makes it part of its own INSERT ... SELECT, one statement.
 */
export function kindsAfter(db: Kysely<any>, schema: string, afterSeq: number, options: { limit: number; kinds?: readonly string[] }) {
  let query = db.selectFrom(`${schema}.entries`).select(['seq', 'kind']).where('seq', '>', afterSeq).orderBy('seq').limit(options.limit);
  if (options.kinds) query = query.where('kind', 'in', options.kinds);
  return query;
}

/** The highest seq projected; undefined while none is. */
export async function lastSeq(db: Kysely<any>, schema: string): Promise<number | undefined> {
  const row = await db
    .selectFrom(`${schema}.entries`)
    .select((eb) => eb.fn.max('seq').as('seq'))
    .executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
}

/** Those of `seqs` that are projected, in ledger order. */
export async function entriesAt(db: Kysely<any>, schema: string, seqs: readonly number[]): Promise<ServedEntry[]> {
  if (seqs.length === 0) return [];
  return (await db.selectFrom(`${schema}.entries`).select(['body', 'kind']).where('seq', 'in', seqs).orderBy('seq').execute()).map(parse);
}

/** These queries over the read model in `schema`: what the doorbells read of the ledger (libs/vault's `ProjectedEntries`). */
export function inSchema(schema: string) {
  return {
    kindsAfter: (db: Kysely<any>, afterSeq: number, options: { limit: number; kinds?: readonly string[] }) => kindsAfter(db, schema, afterSeq, options),
    lastSeq: (db: Kysely<any>) => lastSeq(db, schema),
    at: (db: Kysely<any>, seqs: readonly number[]) => entriesAt(db, schema, seqs),
  };
}
