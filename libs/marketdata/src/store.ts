import type { Kysely } from 'kysely';
import { migrate, type Migration } from '@svc/readmodel';

/** Each kind of store's one instance per database in this process. */
const shared = new WeakMap<Kysely<any>, Map<Function, MarketDataStore>>();

/**
 * Tables the workers write and the API reads, in a schema of their own beside the read models. What they hold
 * comes from the chain or from a worker's schedule, not from the ledger: a rebuild of the read models (built in a
 * new schema and swapped in) has nothing to replay them from, so they must not live in the schema it replaces.
 * Whichever process uses a store first creates its schema.
 */
export abstract class MarketDataStore {
  private ready?: Promise<void>;

  protected constructor(
    readonly db: Kysely<any>,
    readonly schema: string,
    private readonly migrations: readonly Migration[],
  ) {}

  /** Creates the schema once per store; a failed attempt leaves the next call to try again. */
  init(): Promise<this> {
    this.ready ??= migrate(this.db, this.schema, this.migrations).then(
      () => undefined,
      (error) => {
        this.ready = undefined;
        throw error;
      },
    );
    return this.ready.then(() => this);
  }

  /** The process's one store of this kind on `db`, its schema created on first use. */
  static forDatabase<T extends MarketDataStore>(this: new (db: Kysely<any>) => T, db: Kysely<any>): Promise<T> {
    let stores = shared.get(db);
    if (!stores) shared.set(db, (stores = new Map()));
    const found = stores.get(this);
    if (found instanceof this) return found.init();
    const store = new this(db);
    stores.set(this, store);
    return store.init();
  }
}
