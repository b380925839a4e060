import type { Kysely } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import type { Migration } from '@svc/readmodel';

/** An entry as the projector read it: parsed, and the exact bytes the event store keeps. */
export interface ProjectedEntry {
  entry: LedgerEntry;
  bytes: string;
}

/** One read model: the events it cares about, how its rows change for a batch of them, and its migrations. */
export interface Projection {
  name: string;
  migrations: Migration[];
  /** Event types applied; `'*'` is every entry. */
  canHandle: readonly string[] | '*';
  /**
   * Applies the entries of one batch that this projection handles, in seq order, inside the batch's
   * transaction. Must be idempotent: a batch replayed after a crash applies again to the same rows.
   */
  apply(trx: Kysely<any>, schema: string, entries: ProjectedEntry[]): Promise<void>;
}

export function handles(projection: Projection, type: string): boolean {
  return projection.canHandle === '*' || projection.canHandle.includes(type);
}

/** Splits rows for multi-row statements, well under PostgreSQL's 65535 parameters. */
export function* chunks<T>(rows: T[], size = 1000): Iterable<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}
