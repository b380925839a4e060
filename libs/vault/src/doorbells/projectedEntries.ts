import type { Kysely, SelectQueryBuilder } from 'kysely';

/** The ledger entry a delivery carries (`data` included). */
export interface DeliveredEntry {
  seq: number;
  type: string;
  at: number;
  actor: string;
  data: Record<string, unknown>;
  hash: string;
}

/** What picks the doorbells that ring for an entry. */
export interface EntryKind {
  seq: number;
  kind: string;
}

/**
 * What the doorbells read of the ledger: the projector's `entries` read model, through the queries that
 * projections/ exports (`entries.inSchema(schema)`), handed in by the composition root. The vault does not
 * import projections/ (which reaches the vault again through libs/chain) and names none of its tables.
 */
export interface ProjectedEntries {
  /**
   * The entries after `afterSeq` in ledger order, at most `limit`, of `kinds` when given. A query, not its
   * rows, so the fan-out can make it part of its own INSERT ... SELECT.
   */
  kindsAfter(db: Kysely<any>, afterSeq: number, options: { limit: number; kinds?: readonly string[] }): SelectQueryBuilder<any, any, EntryKind>;
  /** The highest seq projected; undefined while none is. */
  lastSeq(db: Kysely<any>): Promise<number | undefined>;
  /** Those of `seqs` that are projected (none, for instance, while the read model is rebuilt). */
  at(db: Kysely<any>, seqs: readonly number[]): Promise<DeliveredEntry[]>;
}
