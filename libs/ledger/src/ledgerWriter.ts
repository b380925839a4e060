import { randomUUID } from 'node:crypto';
import { GENESIS_HASH, sealAndEncode, type LedgerEntry } from './chain';
import { type EventStore, WrongExpectedRevisionError } from './eventStore';
import type { ColdRead, StateWrite } from './journal';
import type { LedgerModel, Rejection } from './model';
import type { SnapshotStore } from './snapshotStore';
import type { StateHead, StateTier } from './stateTier';

export const LEDGER_STREAM = 'ledger';

export type CommandOutcome = { ok: true; entries: LedgerEntry[] } | { ok: false; rejection: Rejection };

interface Pending<C> {
  command: C;
  resolve(outcome: CommandOutcome): void;
  reject(error: unknown): void;
}

export interface LedgerWriterOptions {
  /**
   * Keeps the decision state in this store, in step with every append, and only the keys used lately in
   * memory (`hotKeys` per map): memory then follows what deciding needs, not the ledger's length, and no
   * snapshot is taken or read. `lockStream` is the event store's append lock (PostgreSQL), taken to reset the
   * stored state before it is built from the ledger.
   */
  tier?: {
    state: StateTier;
    hotKeys?: number;
    lockStream(trx: import('kysely').Kysely<any>): Promise<number>;
    /** Entries per page when taking in entries stored without a writer (5,000). */
    catchUpPage?: number;
  };
  snapshots?: SnapshotStore;
  snapshotEvery?: number;
  maxBatch?: number;
  now?: () => number;
  onBatch?: (size: number, entries: number) => void;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const MAX_CONFLICT_RETRIES = 50;
const DEFAULT_HOT_KEYS = 20_000;
const CATCH_UP_PAGE = 1000;
/** A page big enough that its round trips cost little beside its work, small beside the hot keys. */
const TIERED_CATCH_UP_PAGE = 5000;
const MAX_STORE_RETRIES = 3;

/**
 * The one writer of the `ledger` stream in this process. Commands queue up; each flush decides every
 * queued command in order against state at the ledger head and appends all their events in ONE call
 * (group commit). A revision conflict means another process appended first: roll back, catch up,
 * decide again.
 */
export class LedgerWriter<S, C> {
  private state: S;
  private headSeq = -1;
  private headHash = GENESIS_HASH;
  private headAt = 0;
  private queue: Pending<C>[] = [];
  private flushing = false;
  /** Batches and catch-ups take turns: state is never evolved by two of them at once. */
  private exclusive: Promise<unknown> = Promise.resolve();
  private lastSnapshotSeq = -1;
  private snapshotting = false;
  private readonly now: () => number;

  constructor(
    private readonly store: EventStore,
    private readonly model: LedgerModel<S, C>,
    private readonly options: LedgerWriterOptions = {},
  ) {
    this.state = model.initialState();
    this.now = options.now ?? Date.now;
  }

  get head(): { seq: number; hash: string } {
    return { seq: this.headSeq, hash: this.headHash };
  }

  /**
   * Read-only access for queries that must agree with the head (e.g. authentication of a citizen). A key
   * the tiered state does not hold in memory is loaded and the read runs again.
   */
  async read<T>(read: (state: S) => T): Promise<T> {
    const journal = this.model.journal(this.state);
    for (;;) {
      const { result, cold } = journal.probing(() => read(this.state));
      if (cold.length === 0) return result;
      // Reads with no writes between them (authentication of many citizens) must not grow memory either:
      // evict first, so that what this read loads stays for its next run.
      await this.turn(async () => {
        this.evict();
        await this.load(cold);
      });
    }
  }

  /** Loads the newest snapshot (or the tiered state's head), then reads only the tail of the ledger. */
  async start(): Promise<void> {
    if (this.options.tier) return this.startTiered(this.options.tier);
    await this.startInMemory();
  }

  private async startInMemory(): Promise<void> {
    const snapshot = await this.options.snapshots?.load(LEDGER_STREAM);
    if (snapshot && snapshot.version === this.model.snapshotVersion && (await this.storeHas(snapshot.seq, snapshot.hash))) {
      this.state = this.model.restore(snapshot.state);
      this.headSeq = snapshot.seq;
      this.headHash = snapshot.hash;
      this.headAt = snapshot.at;
      this.lastSnapshotSeq = snapshot.seq;
    } else if (snapshot) {
      this.options.log?.warn({ seq: snapshot.seq }, 'snapshot ignored: another version, or the event store does not hold its head');
    }
    await this.catchUpInMemory();
  }

  /** A snapshot is only good for the store it was taken from: its head must be stored there. */
  private async storeHas(seq: number, hash: string): Promise<boolean> {
    const [stored] = await this.store.readForward(LEDGER_STREAM, seq, 1);
    if (stored?.revision !== seq) return false;
    try {
      return (JSON.parse(stored.data) as LedgerEntry).hash === hash;
    } catch {
      return false;
    }
  }

  /** Brings decision state up to the stored head (e.g. after another process appended). */
  sync(): Promise<void> {
    return this.turn(() => this.catchUp());
  }

  private turn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.exclusive.then(work, work);
    this.exclusive = run.catch(() => undefined);
    return run;
  }

  /**
   * A ledger kept before its state was tiered has none stored: its state is built by reading the ledger from
   * the start through the tier, page by page, as entries appended without a writer are taken in, so that
   * memory holds the hot keys only, even while the state of a long ledger is built.
   */
  private async startTiered(tier: NonNullable<LedgerWriterOptions['tier']>): Promise<void> {
    const journal = this.model.journal(this.state);
    journal.tiered = true;
    const stored = await tier.state.head(this.model.snapshotVersion);
    if (stored && (await this.storeHas(stored.seq, stored.hash))) {
      this.moveHead(stored);
    } else {
      if (stored) this.options.log?.warn({ seq: stored.seq }, 'stored decision state ignored: the event store does not hold its head');
      await tier.state.reset(this.model.snapshotVersion, tier.lockStream);
    }
    await this.catchUp();
  }

  private moveHead(head: StateHead): void {
    this.headSeq = head.seq;
    this.headHash = head.hash;
    this.headAt = Math.max(this.headAt, head.at);
  }

  /** Between batches only: a batch's writes stay in memory until it is committed or rolled back. */
  private evict(): void {
    this.evictExcept([]);
  }

  /** Evicts, but keeps the keys of writes not stored yet. */
  private evictExcept(pending: readonly StateWrite[]): void {
    if (this.options.tier) this.model.journal(this.state).evict(this.options.tier.hotKeys ?? DEFAULT_HOT_KEYS, pending);
  }

  /** Loads cold keys into memory (as they are stored: committed state). */
  private async load(keys: ColdRead[]): Promise<void> {
    const tier = this.options.tier;
    if (!tier) throw new Error('a decision-state key is cold, but the state is not tiered');
    const journal = this.model.journal(this.state);
    const wanted = new Map<string, { map: string; key: string }>();
    for (const { map, key } of keys) wanted.set(`${map}\u0000${key}`, { map, key });
    const found = await tier.state.load([...wanted.values()]);
    for (const row of found) {
      journal.map(row.map)?.fill(row.key, row.value);
      wanted.delete(`${row.map}\u0000${row.key}`);
    }
    for (const { map, key } of wanted.values()) journal.map(map)?.fill(key, undefined);
  }

  private async catchUp(): Promise<void> {
    if (this.options.tier) return this.catchUpTiered(this.options.tier.state);
    return this.catchUpInMemory();
  }

  private async catchUpInMemory(): Promise<void> {
    for (;;) {
      const batch = await this.store.readForward(LEDGER_STREAM, this.headSeq + 1, CATCH_UP_PAGE);
      for (const stored of batch) {
        const entry = JSON.parse(stored.data) as LedgerEntry;
        this.model.evolve(this.state, entry);
        this.headSeq = stored.revision;
        this.headHash = entry.hash;
        this.headAt = Math.max(this.headAt, entry.at);
      }
      if (batch.length < CATCH_UP_PAGE) return;
    }
  }

  /**
   * Other writers stored their state with their entries: when the stored head moved, what memory holds may
   * be stale and is dropped. Entries stored without a writer (a ledger kept before its state was tiered, or
   * bulk-loaded) are evolved here and stored page by page, each page's state written while the next is read
   * and evolved. Memory is trimmed to the hot keys between pages, except for the keys of the page whose write
   * is in flight: a key not in memory is then always read from a stored state as new as memory's.
   */
  private async catchUpTiered(tier: StateTier): Promise<void> {
    const journal = this.model.journal(this.state);
    const stored = await tier.head(this.model.snapshotVersion);
    if (stored && stored.seq > this.headSeq) {
      journal.forgetAll();
      this.moveHead(stored);
    }
    let writing: { done: Promise<boolean>; writes: StateWrite[]; head: StateHead } | undefined;
    /** Waits for the page in flight; false if another process stored it first, and memory is then dropped. */
    const landed = async (): Promise<boolean> => {
      if (!writing) return true;
      const { done, head } = writing;
      writing = undefined;
      let stored: boolean;
      try {
        stored = await done;
      } catch (error) {
        // Memory holds pages no one stored, past the head this writer is at.
        journal.forgetAll();
        throw error;
      }
      if (stored) {
        this.moveHead(head);
        return true;
      }
      journal.forgetAll();
      const now = await tier.head(this.model.snapshotVersion);
      if (now) this.moveHead(now);
      return false;
    };
    try {
      for (;;) {
        const from = writing ? writing.head.seq : this.headSeq;
        const batch = await this.store.readForward(LEDGER_STREAM, from + 1, this.options.tier?.catchUpPage ?? TIERED_CATCH_UP_PAGE);
        if (batch.length === 0) break;
        const entries = batch.map((stored) => JSON.parse(stored.data) as LedgerEntry);
        for (;;) {
          journal.begin();
          let cold: ColdRead[];
          try {
            ({ cold } = journal.probing(() => entries.forEach((entry) => this.model.evolve(this.state, entry))));
          } catch (error) {
            journal.rollback();
            throw error;
          }
          if (cold.length === 0) break;
          journal.rollback();
          await this.load(cold);
        }
        const writes = journal.writes();
        journal.commit();
        // The page before must have landed for this one to be stored after it; if it did not, this page was
        // evolved from a state no one stored, and the loop starts again from the stored head.
        if (!(await landed())) continue;
        this.evictExcept(writes);
        const last = entries[entries.length - 1]!;
        const head = { seq: last.seq, hash: last.hash, at: Math.max(this.headAt, ...entries.map((e) => e.at)) };
        const done = tier.advance(writes, from, head);
        // Awaited once the next page is evolved; a failure meanwhile must not count as unhandled.
        done.catch(() => undefined);
        writing = { done, writes, head };
      }
      await landed();
    } finally {
      // After a failure: the write in flight must settle before anyone reads the stored state again.
      if (writing) {
        await writing.done.catch(() => undefined);
        journal.forgetAll();
      }
    }
    this.evict();
  }

  execute(command: C): Promise<CommandOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ command, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxBatch ?? 1000);
        await this.turn(() => this.commitBatch(batch));
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commitBatch(batch: Pending<C>[]): Promise<void> {
    const journal = this.model.journal(this.state);
    for (let attempt = 0; ; attempt++) {
      let decided: Decided;
      try {
        decided = await this.decideAll(batch);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      const { outcomes, entries, encoded, at } = decided;
      if (entries.length === 0) {
        journal.commit();
        this.evict();
        batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
        return;
      }
      const last = entries[entries.length - 1]!;
      const head = { seq: last.seq, hash: last.hash, at };
      try {
        await this.appendWithRetry(entries, encoded, journal.writes(), head);
      } catch (error) {
        journal.rollback();
        if (error instanceof WrongExpectedRevisionError && attempt < MAX_CONFLICT_RETRIES) {
          await backoff(attempt);
          try {
            await this.catchUp();
          } catch (catchUpError) {
            for (const pending of batch) pending.reject(catchUpError);
            return;
          }
          continue;
        }
        for (const pending of batch) pending.reject(error);
        return;
      }
      journal.commit();
      this.moveHead(head);
      this.evict();
      this.options.onBatch?.(batch.length, entries.length);
      batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
      this.maybeSnapshot();
      return;
    }
  }

  /**
   * Decides every command in order against the head, evolving the state in place under the journal (left
   * open: the caller commits or rolls back). Keys not in memory read as absent and are noted; if any were,
   * the pass is rolled back, they are loaded in one query, and the batch is decided again, until a pass
   * reads only what memory holds.
   */
  private async decideAll(batch: Pending<C>[]): Promise<Decided> {
    const journal = this.model.journal(this.state);
    for (;;) {
      journal.begin();
      let pass: { result: Decided; cold: ColdRead[] };
      try {
        pass = journal.probing(() => this.decidePass(batch));
      } catch (error) {
        journal.rollback();
        throw error;
      }
      if (pass.cold.length === 0) return pass.result;
      journal.rollback();
      await this.load(pass.cold);
    }
  }

  private decidePass(batch: Pending<C>[]): Decided {
    const outcomes: CommandOutcome[] = [];
    const entries: LedgerEntry[] = [];
    const encoded: string[] = [];
    let prev = this.headHash;
    const at = Math.max(this.now(), this.headAt);
    for (const pending of batch) {
      const decision = this.model.decide(pending.command, this.state, at);
      if (!decision.ok) {
        outcomes.push(decision);
        continue;
      }
      const mine: LedgerEntry[] = [];
      for (const event of decision.events) {
        const { entry, bytes } = sealAndEncode(prev, { seq: this.headSeq + 1 + entries.length, type: event.type, at, actor: event.actor, data: event.data });
        this.model.evolve(this.state, entry);
        entries.push(entry);
        encoded.push(bytes);
        mine.push(entry);
        prev = entry.hash;
      }
      outcomes.push({ ok: true, entries: mine });
    }
    return { outcomes, entries, encoded, at };
  }

  /** An ambiguous store error is retried with the same event ids, so an append that did land is not doubled. */
  private async appendWithRetry(entries: LedgerEntry[], encoded: string[], writes: StateWrite[], head: StateHead): Promise<void> {
    const events = entries.map((entry, i) => ({ id: randomUUID(), type: entry.type, data: encoded[i]! }));
    const expected = this.headSeq === -1 ? 'no_stream' : this.headSeq;
    const tier = this.options.tier?.state;
    const options = tier ? { alongside: (trx: import('kysely').Kysely<any>) => tier.writeIn(trx, writes, head) } : {};
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.append(LEDGER_STREAM, events, expected, options);
        return;
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError || attempt >= MAX_STORE_RETRIES) throw error;
        this.options.log?.warn({ err: error, attempt }, 'ledger append failed; retrying with the same event ids');
        await backoff(attempt);
      }
    }
  }

  private maybeSnapshot(): void {
    if (this.options.tier) return;
    const every = this.options.snapshotEvery ?? 1000;
    const snapshots = this.options.snapshots;
    if (!snapshots || this.snapshotting || this.headSeq - this.lastSnapshotSeq < every) return;
    this.snapshotting = true;
    // Serialised now, while the state is exactly the committed head; written in the background.
    const snapshot = {
      name: LEDGER_STREAM,
      version: this.model.snapshotVersion,
      seq: this.headSeq,
      hash: this.headHash,
      at: this.headAt,
      state: this.model.snapshot(this.state),
    };
    snapshots
      .save(snapshot)
      .then(() => (this.lastSnapshotSeq = snapshot.seq))
      .catch((error) => this.options.log?.error({ err: error }, 'snapshot failed; the next one will try again'))
      .finally(() => (this.snapshotting = false));
  }

  /** Writes a snapshot now (on shutdown, so the next start reads less). */
  async saveSnapshot(): Promise<void> {
    if (this.options.tier || !this.options.snapshots || this.headSeq < 0 || this.headSeq === this.lastSnapshotSeq) return;
    await this.options.snapshots.save({
      name: LEDGER_STREAM,
      version: this.model.snapshotVersion,
      seq: this.headSeq,
      hash: this.headHash,
      at: this.headAt,
      state: this.model.snapshot(this.state),
    });
    this.lastSnapshotSeq = this.headSeq;
  }
}

interface Decided {
  outcomes: CommandOutcome[];
  entries: LedgerEntry[];
  encoded: string[];
  at: number;
}

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(200, 2 ** Math.min(attempt, 7)) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
