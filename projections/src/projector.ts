import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { LEDGER_STREAM, type EventStore, type LedgerEntry, type StoredEvent } from '@svc/ledger';
import { migrate, type Migration, type SqlDatabase } from '@svc/readmodel';
import { CheckpointMovedError, checkpointMigrations, ensureCheckpoints, lockCheckpoints, lowestOf, moveCheckpoints, readCheckpoints, type ProjectedNotification } from './checkpoints';
import { handles, type ProjectedEntry, type Projection } from './projection';
import { Trail } from './trail';

/** After a failure, how long a lane waits before it reads the ledger again. */
const RETRY_MS = 1000;

export interface ProjectorOptions {
  database: SqlDatabase;
  store: EventStore;
  projections: Projection[];
  schema: string;
  bus?: Bus;
  batchSize?: number;
  /**
   * Projections each live batch is applied to, and announced for, before the others: what `/ws` reads (the
   * entries) then waits for one short transaction, not for every read model of a batch of posts.
   */
  leading?: readonly string[];
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Migrations of every read model, ready to run into any schema (the live one or a rebuild beside it). */
export function readModelMigrations(projections: Projection[]): Migration[] {
  return [...checkpointMigrations(), ...projections.flatMap((p) => p.migrations)];
}

/**
 * Follows the ledger for each projection from that projection's own checkpoint. Projections at the same
 * position share one read of each batch and one transaction, which applies the batch to each of them AND moves
 * their checkpoints, so a crash at any point replays a batch harmlessly. A projection behind the others (new,
 * or moved back by a rebuild, or held back by its own failures) reads the ledger in a lane of its own until it
 * reaches them, and the others keep following the head meanwhile. Notifications go out only after a commit.
 */
export class Projector {
  private positions = new Map<string, number>();
  /** How far `run` has followed the ledger live; projections behind it catch up in lanes of their own. */
  private following = -1;
  private readonly inLane = new Set<string>();
  private readonly lanes = new Set<Promise<void>>();
  /** The trail of the live follow under way, if its projections are split. */
  private trail?: Trail;
  readonly schema: string;

  constructor(private readonly options: ProjectorOptions) {
    this.schema = options.schema;
  }

  /** The seq up to which every projection has applied the ledger. */
  get position(): number {
    return lowestOf(this.positions, this.names);
  }

  /** Each projection's checkpoint, as this projector last committed or read it. */
  get checkpoints(): ReadonlyMap<string, number> {
    return this.positions;
  }

  private get names(): string[] {
    return this.options.projections.map((p) => p.name);
  }

  private positionOf(projection: Projection): number {
    return this.positions.get(projection.name) ?? -1;
  }

  async init(): Promise<this> {
    await migrate(this.options.database.db, this.schema, readModelMigrations(this.options.projections));
    await this.reload();
    return this;
  }

  private async reload(): Promise<void> {
    const { db } = this.options.database;
    await ensureCheckpoints(db, this.schema, this.names);
    const stored = await readCheckpoints(db, this.schema);
    this.positions = new Map(this.names.map((name) => [name, stored.get(name) ?? -1]));
  }

  /**
   * Applies one batch to each projection (of `among`) that it continues, in one transaction: a projection whose
   * checkpoint lies within the batch applies the entries after it; one behind the batch or already past it is
   * left alone. Returns the entries applied.
   */
  async applyBatch(batch: StoredEvent[], among: readonly Projection[] = this.options.projections): Promise<LedgerEntry[]> {
    if (batch.length === 0) return [];
    const first = batch[0]!.revision;
    const last = batch[batch.length - 1]!.revision;
    const continued = among.filter((p) => this.positionOf(p) >= first - 1 && this.positionOf(p) < last);
    if (continued.length === 0) return [];
    const parsed: ProjectedEntry[] = batch.map((e) => ({ entry: JSON.parse(e.data) as LedgerEntry, bytes: e.data }));
    const { stored, moves } = await this.options.database.db.transaction().execute(async (trx) => {
      const stored = await lockCheckpoints(trx, this.schema, continued.map((p) => p.name));
      const movedBack = continued.filter((p) => (stored.get(p.name) ?? -1) < this.positionOf(p));
      if (movedBack.length > 0) throw new CheckpointMovedError(movedBack.map((p) => p.name));
      // Projections that were at the same position, by that position: usually one group.
      const moves = new Map<number, Projection[]>();
      for (const projection of continued) {
        const from = stored.get(projection.name) ?? -1;
        // Another projector applied it meanwhile.
        if (from >= last) continue;
        const mine = parsed.filter((p) => p.entry.seq > from && handles(projection, p.entry.type));
        if (mine.length > 0) await projection.apply(trx, this.schema, mine);
        moves.set(from, [...(moves.get(from) ?? []), projection]);
      }
      if (moves.size > 0) {
        const from = new Map([...moves].flatMap(([seq, projections]) => projections.map((p) => [p.name, seq] as const)));
        await moveCheckpoints(trx, this.schema, from, last);
      }
      return { stored, moves };
    });
    const moved = new Set([...moves.values()].flat());
    for (const projection of continued) {
      this.positions.set(projection.name, Math.max(this.positionOf(projection), moved.has(projection) ? last : (stored.get(projection.name) ?? -1)));
    }
    if (moves.size === 0) return [];
    await this.announce(moves, parsed, last);
    const lowest = Math.min(...moves.keys());
    return parsed.filter((p) => p.entry.seq > lowest).map((p) => p.entry);
  }

  /** One notification per group of projections moved together (see ProjectedNotification). */
  private async announce(moves: Map<number, Projection[]>, parsed: ProjectedEntry[], to: number): Promise<void> {
    const bus = this.options.bus;
    if (!bus) return;
    for (const [from, projections] of moves) {
      const entries = parsed.filter((p) => p.entry.seq > from).map((p) => p.entry);
      const message: ProjectedNotification = { kind: 'projected', seq: to, from: from + 1, entries, projections: projections.map((p) => p.name) };
      try {
        await bus.publish(PROJECTED_CHANNEL, message);
      } catch (error) {
        // At most once: a missed notification costs a listener latency, never data (it reads /changes).
        this.options.log?.warn({ err: error, seq: to }, 'bus publish failed');
      }
    }
  }

  /**
   * Projects until every projection has caught up with the head as it was when called; for replay and tests.
   * Reads from the projection furthest behind; the others join as the batches reach them. The next batch is
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
    let next = read(this.position + 1);
    for (;;) {
      const batch = await next;
      const full = batch.length === size;
      if (full) next = read(batch[batch.length - 1]!.revision + 1);
      if (batch.length > 0) {
        await this.applyBatch(batch);
        onProgress?.(this.position);
      }
      if (!full) return this.position;
    }
  }

  /**
   * Follows the ledger live, from the projections furthest ahead, until the signal aborts; any projection behind
   * them catches up in a lane of its own meanwhile, and joins the live batches once it reaches them. The leading
   * projections apply each batch as it comes; the others follow the same batches in a trail of their own, so a
   * live entry never waits for the read models of the batch before it.
   */
  async run(signal: AbortSignal): Promise<void> {
    const size = this.options.batchSize ?? 500;
    const leading = this.options.leading ?? [];
    const [first, rest] = partition(this.options.projections, (p) => leading.includes(p.name));
    const live = first.length > 0 ? first : rest;
    const trailing = first.length > 0 ? rest : [];
    while (!signal.aborted) {
      this.following = Math.max(...this.positions.values(), -1);
      const trail = trailing.length > 0 ? new Trail(this, trailing, this.following + 1, size, signal, () => this.startLanes(signal)) : undefined;
      this.trail = trail;
      try {
        this.startLanes(signal);
        for await (const batch of batches(this.options.store.subscribe(LEDGER_STREAM, this.following + 1, signal), size)) {
          await this.applyLive(batch, live);
          this.following = batch[batch.length - 1]!.revision;
          await trail?.push(batch);
          this.startLanes(signal);
        }
      } catch (error) {
        if (signal.aborted) break;
        if (!(error instanceof CheckpointMovedError)) {
          this.options.log?.error({ err: error, checkpoint: this.position }, 'projector batch failed; retrying');
          await pause(RETRY_MS, signal);
        }
        await trail?.stop();
        await this.reload().catch(() => undefined);
      } finally {
        await trail?.stop();
        this.trail = undefined;
      }
    }
    await Promise.allSettled(this.lanes);
  }

  /**
   * A live batch that fails for all of `among` together is applied by each projection alone, so that one
   * projection that keeps failing falls behind by itself (and retries in a lane) while the others go on. If none
   * can apply it (the database is away, most likely), the failure is thrown.
   */
  async applyLive(batch: StoredEvent[], among: readonly Projection[]): Promise<void> {
    let failure: unknown;
    try {
      await this.applyBatch(batch, among);
      return;
    } catch (error) {
      if (error instanceof CheckpointMovedError) throw error;
      failure = error;
    }
    let applied = 0;
    const failed: Array<{ projection: Projection; error: unknown }> = [];
    for (const projection of among) {
      try {
        if ((await this.applyBatch(batch, [projection])).length > 0) applied += 1;
      } catch (error) {
        if (error instanceof CheckpointMovedError) throw error;
        failed.push({ projection, error });
      }
    }
    if (applied === 0) throw failure;
    for (const { projection, error } of failed) {
      this.options.log?.error({ err: error, projection: projection.name, checkpoint: this.positionOf(projection) }, 'a projection failed a batch; it falls behind and retries alone');
    }
  }

  /** Reloads the checkpoints after a trail's batch failed for every one of its projections, or one was moved back. */
  async recover(error: unknown): Promise<void> {
    if (!(error instanceof CheckpointMovedError)) this.options.log?.error({ err: error, checkpoint: this.position }, 'trailing read models failed a batch; they catch up in a lane');
    await this.reload().catch(() => undefined);
  }

  /** Starts one lane for each position at which projections are behind the live batches, unless they are in one. */
  private startLanes(signal: AbortSignal): void {
    const behind = new Map<number, Projection[]>();
    for (const projection of this.options.projections) {
      const at = this.positionOf(projection);
      if (at >= this.following || this.inLane.has(projection.name) || this.trail?.carries(projection, at)) continue;
      behind.set(at, [...(behind.get(at) ?? []), projection]);
    }
    for (const members of behind.values()) {
      for (const projection of members) this.inLane.add(projection.name);
      const lane: Promise<void> = this.catchUpLane(members, signal).finally(() => {
        for (const projection of members) this.inLane.delete(projection.name);
        this.lanes.delete(lane);
      });
      this.lanes.add(lane);
    }
  }

  /** Reads the ledger for projections behind the live batches, until they reach them and are taken along. */
  private async catchUpLane(members: Projection[], signal: AbortSignal): Promise<void> {
    const names = members.map((p) => p.name);
    this.options.log?.info({ projections: names, checkpoint: lowestOf(this.positions, names), following: this.following }, 'catching up');
    for (;;) {
      const at = lowestOf(this.positions, names);
      if (signal.aborted || at >= this.following) return;
      try {
        const batch = await this.options.store.readForward(LEDGER_STREAM, at + 1, this.options.batchSize ?? 500);
        if (batch.length === 0) return;
        await this.applyBatch(batch, members);
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof CheckpointMovedError)) {
          this.options.log?.error({ err: error, projections: names, checkpoint: at }, 'catching up failed; retrying');
          await pause(RETRY_MS, signal);
        }
        await this.reload().catch(() => undefined);
      }
    }
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
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

function partition<T>(items: readonly T[], first: (item: T) => boolean): [T[], T[]] {
  return [items.filter(first), items.filter((item) => !first(item))];
}
