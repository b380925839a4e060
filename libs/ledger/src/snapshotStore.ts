import { sql } from 'kysely';
import { execAll, migrate, type Migration, type SqlDatabase } from '@svc/readmodel';

export interface Snapshot {
  name: string;
  version: number;
  seq: number;
  hash: string;
  at: number;
  state: unknown;
}

const migrations: Migration[] = [
  {
    name: '001_snapshots',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.snapshots (
           name text primary key,
           version int not null,
           seq bigint not null,
           hash text not null,
           at bigint not null,
           state text not null,
           taken_at timestamptz not null default now())`,
      ]),
  },
];

/** Decision-state snapshots, so a starting writer reads only the ledger tail. Private; never served. */
export class SnapshotStore {
  constructor(
    private readonly database: SqlDatabase,
    private readonly schema = 'writer',
  ) {}

  async init(): Promise<this> {
    await migrate(this.database.db, this.schema, migrations);
    return this;
  }

  async load(name: string): Promise<Snapshot | undefined> {
    const row = await this.database.db
      .selectFrom(`${this.schema}.snapshots`)
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) return undefined;
    return { name, version: row.version, seq: Number(row.seq), hash: row.hash, at: Number(row.at), state: JSON.parse(row.state) };
  }

  async forget(name: string): Promise<void> {
    await this.database.db.deleteFrom(`${this.schema}.snapshots`).where('name', '=', name).execute();
  }

  /** Keeps the newest snapshot: an older one never overwrites a newer one. */
  async save(snapshot: Snapshot): Promise<void> {
    const row = toRow(snapshot);
    await this.database.db
      .insertInto(`${this.schema}.snapshots`)
      .values(row)
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet(row)
          .where(sql<boolean>`${sql.ref(`${this.schema}.snapshots.seq`)} < ${snapshot.seq} or ${sql.ref(`${this.schema}.snapshots.version`)} <> ${snapshot.version}`),
      )
      .execute();
  }

  /** Overwrites whatever is stored under the name. */
  async put(snapshot: Snapshot): Promise<void> {
    const row = toRow(snapshot);
    await this.database.db
      .insertInto(`${this.schema}.snapshots`)
      .values(row)
      .onConflict((oc) => oc.column('name').doUpdateSet(row))
      .execute();
  }

  /**
   * Stores the snapshot unless the one stored under its name is held: its state says `running` and it was
   * written after `staleBefore` (ms). Says whether it stored it. Processes take turns at a job through it.
   */
  async claim(snapshot: Snapshot, staleBefore: number): Promise<boolean> {
    const row = toRow(snapshot);
    const stored = sql.ref(`${this.schema}.snapshots`);
    const claimed = await this.database.db
      .insertInto(`${this.schema}.snapshots`)
      .values(row)
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet(row)
          .where(sql<boolean>`(${stored}.state::jsonb ->> 'running') is distinct from 'true' or ${stored}.at < ${staleBefore}`),
      )
      .returning('name')
      .executeTakeFirst();
    return claimed !== undefined;
  }
}

function toRow(snapshot: Snapshot) {
  return {
    name: snapshot.name,
    version: snapshot.version,
    seq: snapshot.seq,
    hash: snapshot.hash,
    at: snapshot.at,
    state: JSON.stringify(snapshot.state),
  };
}
