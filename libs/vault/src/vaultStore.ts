import { migrate, type Migration, type SqlDatabase } from '@svc/readmodel';

/** A store of the vault: its tables live in the vault's schema and are made by its own migrations, on `init`. */
export abstract class VaultStore {
  protected abstract readonly migrations: readonly Migration[];

  constructor(
    protected readonly database: SqlDatabase,
    protected readonly schema = 'vault',
  ) {}

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, this.migrations);
    return this;
  }
}
