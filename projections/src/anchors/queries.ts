import { sql, type Kysely } from 'kysely';

/** One anchor as the API shows it: the ledger seq and hash its memo commits to, where it landed, and its own entry. */
export interface AnchorView {
  seq: number;
  hash: string;
  signature: string;
  slot: number | null;
  at: number;
  ledger_seq: number;
}

const view = (r: Record<string, unknown>): AnchorView => ({
  seq: Number(r.seq),
  hash: String(r.hash),
  signature: String(r.signature),
  slot: r.slot === null ? null : Number(r.slot),
  at: Number(r.at),
  ledger_seq: Number(r.ledger_seq),
});

const FIELDS = ['seq', 'hash', 'signature', 'slot', 'at', 'ledger_seq'] as const;

/** Anchors newest first, those of a seq below `before` when given. */
export async function listAnchors(db: Kysely<any>, schema: string, options: { before?: number; limit: number }): Promise<AnchorView[]> {
  let query = db.selectFrom(`${schema}.anchors`).select([...FIELDS]);
  if (options.before !== undefined) query = query.where('seq', '<', options.before);
  const rows = await query.orderBy('seq', 'desc').orderBy('ledger_seq', 'desc').limit(options.limit).execute();
  return rows.map(view);
}

export async function latestAnchor(db: Kysely<any>, schema: string): Promise<AnchorView | null> {
  const [latest] = await listAnchors(db, schema, { limit: 1 });
  return latest ?? null;
}

/** For each seq, the first anchor that commits to it or to an entry after it (so covers it); absent when none does yet. */
export async function anchorsCovering(db: Kysely<any>, schema: string, seqs: readonly number[]): Promise<Map<number, AnchorView>> {
  if (seqs.length === 0) return new Map();
  const { rows } = await sql<Record<string, unknown> & { entry: string }>`
    select e.entry, a.seq, a.hash, a.signature, a.slot, a.at, a.ledger_seq
    from unnest(${`{${[...new Set(seqs)].join(',')}}`}::bigint[]) as e(entry)
    join lateral (select * from ${sql.raw(schema)}.anchors where seq >= e.entry order by seq, ledger_seq limit 1) a on true`.execute(db);
  return new Map(rows.map((r) => [Number(r.entry), view(r)]));
}
