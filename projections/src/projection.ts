import type { Kysely } from 'kysely';
import type { LedgerEntry } from '@svc/ledger';
import type { Migration } from '@svc/readmodel';

/** One read model: the events it cares about, how a row changes for one, and its migrations. */
export interface Projection {
  name: string;
  migrations: Migration[];
  /** Event types applied; `'*'` is every entry. */
  canHandle: readonly string[] | '*';
  /** Must be idempotent: a batch replayed after a crash applies again to the same rows. */
  apply(trx: Kysely<any>, schema: string, entry: LedgerEntry): Promise<void>;
}

export function handles(projection: Projection, type: string): boolean {
  return projection.canHandle === '*' || projection.canHandle.includes(type);
}
