import { sql, type Kysely } from 'kysely';
import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { LEDGER_STREAM, type EventStore, type LedgerEntry, type StoredEvent } from '@svc/ledger';
import { execAll, migrate, quoteIdent, type Migration, type SqlDatabase } from '@svc/readmodel';
import { handles, type Projection } from './projection';

const CHECKPOINT = 'main';

export class CheckpointMovedError extends Error {
  constructor(readonly expected: number) {
    super(`checkpoint is no longer ${expected}: another projector advanced it`);
  }
}

export interface ProjectorOptions {
  database: SqlDatabase;
  store: EventStore;
  projections: Projection[];
  schema: string;
  bus?: Bus;
  batchSize?: number;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

function checkpointMigration(): Migration {
  return {
    name: 'checkpoints_001',
    up: (db, schema) =>
      execAll(db, [
        `create table ${schema}.checkpoints (name text primary key, seq bigint not null, updated_at timestamptz not null default now())`,
        `insert into ${schema}.checkpoints (name, seq) values ('${CHECKPOINT}', -1)`,
      ]),
  };
}

/** Migrations of every read model, ready to run into any schema (the live one or a rebuild beside it). */
export function readModelMigrations(projections: Projection[]): Migration[] {
  return [checkpointMigration(), ...projections.flatMap((p) => p.migrations)];
}

export async function readCheckpoint(db: Kysely<any>, schema: string): Promise<number> {
  const row = await db.selectFrom(`${schema}.checkpoints`).select('seq').where('name', '=', CHECKPOINT).executeTakeFirst();
  return row ? Number(row.seq) : -1;
}

/** Sets the checkpoint outright: for a rebuild's load, which nothing else writes to. */
export async function writeCheckpoint(db: Kysely<any>, schema: string, seq: number): Promise<void> {
  await db.updateTable(`${schema}.checkpoints`).set({ seq, updated_at: new Date() }).where('name', '=', CHECKPOINT).execute();
}

/**
 * Follows the ledger from its checkpoint and applies each batch of entries to every read model AND
 * moves the checkpoint in the same transaction, so a crash at any point replays a batch harmlessly.
 * Notifications go out only after the commit.
 */
export class Projector {
  private checkpoint = -1;
  readonly schema: string;

  constructor(private readonly options: ProjectorOptions) {
    this.schema = options.schema;
  }

  get position(): number {
    return this.checkpoint;
  }

  async init(): Promise<this> {
    await migrate(this.options.database.db, this.schema, readModelMigrations(this.options.projections));
    this.checkpoint = await readCheckpoint(this.options.database.db, this.schema);
    return this;
  }

  /** Applies one batch; entries at or below the checkpoint are skipped. Returns the entries applied. */
  async applyBatch(batch: StoredEvent[]): Promise<LedgerEntry[]> {
    const { db } = this.options.database;
    const s = quoteIdent(this.schema);
    const applied = await db.transaction().execute(async (trx) => {
      const current = await sql<{ seq: number }>`select seq from ${sql.raw(s)}.checkpoints where name = ${CHECKPOINT} for update`.execute(trx);
      const from = Number(current.rows[0]?.seq ?? -1);
      const fresh = batch.filter((e) => e.revision > from).map((e) => ({ entry: JSON.parse(e.data) as LedgerEntry, bytes: e.data }));
      const entries = fresh.map((p) => p.entry);
      if (entries.length === 0) return { entries, to: from };
      if (entries[0]!.seq !== from + 1) throw new Error(`gap: checkpoint ${from}, next entry ${entries[0]!.seq}`);
      for (const projection of this.options.projections) {
        const mine = fresh.filter((p) => handles(projection, p.entry.type));
        if (mine.length > 0) await projection.apply(trx, this.schema, mine);
      }
      const to = entries[entries.length - 1]!.seq;
      const moved = await trx
        .updateTable(`${this.schema}.checkpoints`)
        .set({ seq: to, updated_at: new Date() })
        .where('name', '=', CHECKPOINT)
        .where('seq', '=', from)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) throw new CheckpointMovedError(from);
      return { entries, to };
    });
    this.checkpoint = applied.to;
    if (applied.entries.length > 0) await this.announce(applied.entries);
    return applied.entries;
  }

  private async announce(entries: LedgerEntry[]): Promise<void> {
    const bus = this.options.bus;
    if (!bus) return;
    const last = entries[entries.length - 1]!;
    try {
      await bus.publish(PROJECTED_CHANNEL, { kind: 'projected', seq: last.seq, from: entries[0]!.seq, entries });
    } catch (error) {
      // At most once: a missed notification costs a listener latency, never data (it reads /changes).
      this.options.log?.warn({ err: error, seq: last.seq }, 'bus publish failed');
    }
  }

  /**
   * Projects until caught up with the head as it was when called; for replay and tests. The next batch is
   * read while this one is applied.
   */
  async catchUp(onProgress?: (seq: number) => void): Promise<number> {
    const size = this.options.batchSize ?? 500;
    const read = (from: number) => {
      const reading = this.options.store.readForward(LEDGER_STREAM, from, size);
      // Awaited below, unless applying the batch before it failed first.
      reading.catch(() => undefined);
      return reading;
    };
    let next = read(this.checkpoint + 1);
    for (;;) {
      const batch = await next;
      const full = batch.length === size;
      if (full) next = read(batch[batch.length - 1]!.revision + 1);
      if (batch.length > 0) {
        await this.applyBatch(batch);
        onProgress?.(this.checkpoint);
      }
      if (!full) return this.checkpoint;
    }
  }

  /** Follows the ledger live until the signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const size = this.options.batchSize ?? 500;
    while (!signal.aborted) {
      try {
        for await (const batch of batches(this.options.store.subscribe(LEDGER_STREAM, this.checkpoint + 1, signal), size)) {
          await this.applyBatch(batch);
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof CheckpointMovedError) {
          this.checkpoint = await readCheckpoint(this.options.database.db, this.schema);
          continue;
        }
        this.options.log?.error({ err: error, checkpoint: this.checkpoint }, 'projector batch failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        this.checkpoint = await readCheckpoint(this.options.database.db, this.schema).catch(() => this.checkpoint);
      }
    }
  }
}

/**
 * Groups what an async source has ready into arrays of at most `max`: items that arrive before the
 * next macrotask join the current batch, so a backlog is applied in big transactions and a live
 * trickle is applied at once.
 */
export async function* batches<T>(source: AsyncIterable<T>, max: number): AsyncIterable<T[]> {
  const iterator = source[Symbol.asyncIterator]();
  const idle = Symbol('idle');
  let next = iterator.next();
  try {
    for (;;) {
      const first = await next;
      if (first.done) return;
      const batch = [first.value];
      next = iterator.next();
      while (batch.length < max) {
        const result = await Promise.race([next, new Promise<typeof idle>((resolve) => setImmediate(() => resolve(idle)))]);
        if (result === idle) break;
        if (result.done) {
          yield batch;
          return;
        }
        batch.push(result.value);
        next = iterator.next();
      }
      yield batch;
    }
  } finally {
    await iterator.return?.();
  }
}
