import { sql, type Kysely } from 'kysely';
import { execAll, type Migration } from '@svc/readmodel';
import { MarketDataStore } from './store';

/** The anchor runner's lease and what holds anchoring up: worker state, not a projection of the ledger. */
export const ANCHOR_SCHEMA = 'anchoring';

const RUNNER = 'main';

const migrations: Migration[] = [
  {
    name: 'anchor_runner_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.runner (
           name text primary key,
           holder text,
           lease_until timestamptz not null,
           delayed_reason text,
           delayed_since timestamptz,
           updated_at timestamptz not null default now())`,
        `insert into ${schema}.runner (name, lease_until) values ('${RUNNER}', 'epoch')`,
      ]),
  },
];

/** Why anchoring waits, and since when (ms); null while it runs as scheduled. */
export interface AnchorDelay {
  reason: string;
  since: number;
}

/**
 * One row decides which process anchors: it takes the lease with a compare-and-set when the last holder's ran out
 * (timed by the database's clock), renews it while it sends, and gives it back. The same row says what delays
 * anchoring (an unfunded treasury), for /readyz in any process.
 */
export class AnchorRunnerStore extends MarketDataStore {
  constructor(db: Kysely<any>, schema = ANCHOR_SCHEMA) {
    super(db, schema, migrations);
  }

  private get table() {
    return sql.raw(`${this.schema}.runner`);
  }

  /** True when `holder` now holds the lease for `leaseMs`; false while another process does. */
  async claim(holder: string, leaseMs: number): Promise<boolean> {
    const row = await sql`
      update ${this.table} set holder = ${holder}, lease_until = now() + ${leaseMs} * interval '1 millisecond', updated_at = now()
      where name = ${RUNNER} and (lease_until <= now() or holder = ${holder})
      returning 1`.execute(this.db);
    return row.rows.length === 1;
  }

  async release(holder: string): Promise<void> {
    await sql`update ${this.table} set lease_until = now(), updated_at = now() where name = ${RUNNER} and holder = ${holder}`.execute(this.db);
  }

  /** Records why anchoring waits; true when it did not wait for that reason already (the caller logs it once). */
  async delay(reason: string | null): Promise<boolean> {
    const row = await sql`
      update ${this.table} set
        delayed_reason = ${reason},
        delayed_since = case when ${reason}::text is null then null when delayed_reason is null then now() else delayed_since end,
        updated_at = now()
      where name = ${RUNNER} and delayed_reason is distinct from ${reason}::text
      returning 1`.execute(this.db);
    return row.rows.length === 1;
  }

  async delayed(): Promise<AnchorDelay | null> {
    const row = await sql<{ delayed_reason: string | null; delayed_since: Date | string | null }>`
      select delayed_reason, delayed_since from ${this.table} where name = ${RUNNER}`.execute(this.db);
    const found = row.rows[0];
    if (!found?.delayed_reason) return null;
    return { reason: found.delayed_reason, since: new Date(found.delayed_since!).getTime() };
  }
}
