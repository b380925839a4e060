import { sql, type Kysely } from 'kysely';
import { liftTimeouts } from '@svc/readmodel';
import { GENESIS_HASH } from './chain';
import type { StateHead } from './decisionState';
import type { StateWrite } from './journal';

/**
 * The cold part of the ledger writer's decision state: every key of every map, as of a ledger head, in an
 * indexed table of the event store's own database. The writer keeps it in step inside each append's
 * transaction, so the table and the ledger never disagree; memory keeps only the keys used lately.
 */
export interface StateTier {
  /** The head the stored state is at; undefined when none is stored for this state version. */
  head(version: number): Promise<StateHead | undefined>;
  /** The stored values of these keys; a key with no row does not exist. */
  load(keys: ReadonlyArray<{ map: string; key: string }>): Promise<Array<{ map: string; key: string; value: unknown }>>;
  /** Stores a batch's writes and the head they bring the state to, in the append's transaction. */
  writeIn(trx: Kysely<any>, writes: StateWrite[], head: StateHead): Promise<void>;
  /**
   * Stores writes that bring the state from `from` to `head` (entries appended without a writer, read back
   * from the ledger), unless another process already did. Says whether this call stored them.
   */
  advance(writes: StateWrite[], from: number, head: StateHead): Promise<boolean>;
  /**
   * Stores an empty state before the ledger's first entry, to be built by advancing it through the ledger (the
   * first start on a ledger kept before the state was tiered, or of another state version). Under the append lock.
   */
  reset(version: number, lock: (trx: Kysely<any>) => Promise<number>): Promise<void>;
}

const CHUNK = 5000;

export class PostgresStateTier implements StateTier {
  constructor(
    private readonly db: Kysely<any>,
    private readonly schema: string,
    private readonly stream: string,
  ) {}

  private get table() {
    return sql.raw(`${this.schema}.decision_state`);
  }

  private get headTable() {
    return sql.raw(`${this.schema}.decision_state_head`);
  }

  async head(version: number): Promise<StateHead | undefined> {
    const { rows } = await sql<{ seq: number; hash: string; at: number; version: number }>`
      select seq, hash, at, version from ${this.headTable} where stream = ${this.stream}`.execute(this.db);
    const row = rows[0];
    if (!row || Number(row.version) !== version) return undefined;
    return { seq: Number(row.seq), hash: row.hash, at: Number(row.at) };
  }

  async load(keys: ReadonlyArray<{ map: string; key: string }>): Promise<Array<{ map: string; key: string; value: unknown }>> {
    const found: Array<{ map: string; key: string; value: unknown }> = [];
    for (let i = 0; i < keys.length; i += CHUNK) {
      const part = keys.slice(i, i + CHUNK);
      const { rows } = await sql<{ map: string; key: string; value: string }>`
        select s.map, s.key, s.value from ${this.table} s
        join unnest(${part.map((k) => k.map)}::text[], ${part.map((k) => k.key)}::text[]) as k(map, key) using (map, key)`.execute(this.db);
      for (const row of rows) found.push({ map: row.map, key: row.key, value: JSON.parse(row.value) });
    }
    return found;
  }

  async writeIn(trx: Kysely<any>, writes: StateWrite[], head: StateHead): Promise<void> {
    const upserts = writes.filter((w) => w.value !== undefined);
    if (upserts.length > CHUNK || upserts.length < writes.length) {
      await this.store(trx, writes);
      await sql`update ${this.headTable} set seq = ${head.seq}, hash = ${head.hash}, at = ${head.at} where stream = ${this.stream}`.execute(trx);
      return;
    }
    // The common batch in one round trip: its upserts and the head.
    await sql`with stored as (${this.upsert(upserts)})
      update ${this.headTable} set seq = ${head.seq}, hash = ${head.hash}, at = ${head.at} where stream = ${this.stream}`.execute(trx);
  }

  private upsert(part: StateWrite[]) {
    return sql`insert into ${this.table} (map, key, value)
      select * from unnest(${part.map((w) => w.map)}::text[], ${part.map((w) => w.key)}::text[], ${part.map((w) => JSON.stringify(w.value))}::text[])
      on conflict (map, key) do update set value = excluded.value`;
  }

  async advance(writes: StateWrite[], from: number, head: StateHead): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const moved = await sql`update ${this.headTable} set seq = ${head.seq}, hash = ${head.hash}, at = ${head.at}
        where stream = ${this.stream} and seq = ${from}`.execute(trx);
      if (Number(moved.numAffectedRows ?? 0) !== 1) return false;
      await this.store(trx, writes);
      return true;
    });
  }

  async reset(version: number, lock: (trx: Kysely<any>) => Promise<number>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // A whole ledger's state may take longer to delete than a serving pool lets a statement run.
      await liftTimeouts(trx);
      await lock(trx);
      // The head first: a page another process is storing meanwhile (advance) holds it, so its rows are either
      // committed before the delete below reads the table, or refused by the head moved here.
      await sql`insert into ${this.headTable} (stream, seq, hash, at, version) values (${this.stream}, -1, ${GENESIS_HASH}, 0, ${version})
        on conflict (stream) do update set seq = excluded.seq, hash = excluded.hash, at = excluded.at, version = excluded.version`.execute(trx);
      await sql`delete from ${this.table}`.execute(trx);
    });
  }

  private async store(trx: Kysely<any>, writes: StateWrite[]): Promise<void> {
    const upserts = writes.filter((w) => w.value !== undefined);
    const deletes = writes.filter((w) => w.value === undefined);
    for (let i = 0; i < upserts.length; i += CHUNK) {
      await this.upsert(upserts.slice(i, i + CHUNK)).execute(trx);
    }
    for (let i = 0; i < deletes.length; i += CHUNK) {
      const part = deletes.slice(i, i + CHUNK);
      await sql`delete from ${this.table} s using unnest(${part.map((w) => w.map)}::text[], ${part.map((w) => w.key)}::text[]) as k(map, key)
        where s.map = k.map and s.key = k.key`.execute(trx);
    }
  }
}
