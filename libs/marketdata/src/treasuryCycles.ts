import { sql, type Kysely } from 'kysely';
import { execAll, type Migration } from '@svc/readmodel';
import { MarketDataStore } from './store';

/**
 * Where the treasury worker keeps its schedule and its last cycle: a schema of its own beside the read models,
 * since neither is a projection of the ledger (every transaction a cycle makes is; these say when it ran and why
 * it did what it did) and a rebuild of the read models must not lose them.
 */
export const TREASURY_SCHEMA = 'treasury';

const CLAIM = 'main';

const migrations: Migration[] = [
  {
    name: 'treasury_cycles_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.cycles (
           name text primary key,
           cycle bigint not null,
           holder text,
           lease_until timestamptz not null,
           due_at timestamptz not null,
           last_cycle jsonb,
           updated_at timestamptz not null default now())`,
        `insert into ${schema}.cycles (name, cycle, lease_until, due_at) values ('${CLAIM}', 0, 'epoch', 'epoch')`,
      ]),
  },
];

/** What the last cycle did, as GET /api/v1/treasury shows it (`last_cycle`). */
export interface LastCycle {
  cycle: number;
  /** When it started (ms). */
  at: number;
  /** SOL the treasury received from the fee distributions it sent. */
  distributed_sol: number;
  /** SOL its buyback put into the service token. */
  sol_spent: number;
  /** Whole tokens the buyback received. */
  tokens_bought: number;
  /** Whole tokens it burned: what it bought, and anything an interrupted cycle left. */
  tokens_burned: number;
  /** Every transaction it made, in order. */
  signatures: string[];
  /** Why it bought nothing (or stopped early); null when it bought and burned. */
  skipped_reason: string | null;
}

/**
 * One claim row decides who runs the next cycle: a process takes it with a compare-and-set update when its
 * lease has run out (and, for a scheduled cycle, when one is due), renews the lease while it works, and gives
 * it back with the cycle's summary. The database's clock times both, so processes need not agree on theirs.
 */
export class TreasuryCycleStore extends MarketDataStore {
  constructor(db: Kysely<any>, schema = TREASURY_SCHEMA) {
    super(db, schema, migrations);
  }

  private get table() {
    return sql.raw(`${this.schema}.cycles`);
  }

  /**
   * The number of the cycle `holder` now runs, or undefined when another holds the lease (or, with `everyMs`, no
   * cycle is due yet; the next one is then due `everyMs` after this one started).
   */
  async claim(holder: string, leaseMs: number, everyMs?: number): Promise<number | undefined> {
    const scheduled = everyMs !== undefined;
    const row = await sql<{ cycle: string | number }>`
      update ${this.table} set
        cycle = cycle + 1,
        holder = ${holder},
        lease_until = now() + ${leaseMs} * interval '1 millisecond',
        due_at = case when ${scheduled} then now() + ${everyMs ?? 0} * interval '1 millisecond' else due_at end,
        updated_at = now()
      where name = ${CLAIM} and lease_until <= now() and (not ${scheduled} or due_at <= now())
      returning cycle`.execute(this.db);
    return row.rows[0] ? Number(row.rows[0].cycle) : undefined;
  }

  /** Extends the lease; false when `holder` no longer has this cycle (its lease ran out and another took over). */
  async renew(holder: string, cycle: number, leaseMs: number): Promise<boolean> {
    const row = await sql`
      update ${this.table} set lease_until = now() + ${leaseMs} * interval '1 millisecond', updated_at = now()
      where name = ${CLAIM} and holder = ${holder} and cycle = ${cycle}
      returning 1`.execute(this.db);
    return row.rows.length === 1;
  }

  /** Stores what the cycle did and frees the lease. */
  async finish(holder: string, cycle: number, last: LastCycle): Promise<void> {
    await sql`
      update ${this.table} set last_cycle = ${JSON.stringify(last)}::jsonb, lease_until = now(), updated_at = now()
      where name = ${CLAIM} and holder = ${holder} and cycle = ${cycle}`.execute(this.db);
  }

  async lastCycle(): Promise<LastCycle | null> {
    const row = await sql<{ last_cycle: unknown }>`select last_cycle from ${this.table} where name = ${CLAIM}`.execute(this.db);
    const value = row.rows[0]?.last_cycle;
    if (value === null || value === undefined) return null;
    return (typeof value === 'string' ? JSON.parse(value) : value) as LastCycle;
  }
}
