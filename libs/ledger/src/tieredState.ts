import type { Kysely } from 'kysely';
import { HeadPosition, type DecisionState, type DecisionStateKind, type StateHead, type WriterLog } from './decisionState';
import type { AppendOptions, EventStore } from './eventStore';
import type { ColdRead, Journal, StateWrite } from './journal';
import { readLedger, storeHoldsHead } from './ledgerStream';
import type { StateModel } from './model';
import type { StateTier } from './stateTier';

export interface TieredStateOptions {
  /** Every key of every map, as of a ledger head, kept in step by every append. */
  tier: StateTier;
  /** Keys kept in memory per map, the most recently used (20,000). */
  hotKeys?: number;
  /** The event store's append lock (PostgreSQL), taken to reset the stored state before it is built from the ledger. */
  lockStream(trx: Kysely<any>): Promise<number>;
  /** Entries per page when taking in entries stored without a writer (5,000). */
  catchUpPage?: number;
}

const DEFAULT_HOT_KEYS = 20_000;
/** A page big enough that its round trips cost little beside its work, small beside the hot keys. */
const CATCH_UP_PAGE = 5000;

/**
 * The decision state kept in a table of the event store's own database (PostgreSQL), written in each append's
 * transaction, and only the keys used lately in memory: memory then follows what deciding needs, not the
 * ledger's length, and no snapshot is taken or read.
 */
export function tieredState<S>(options: TieredStateOptions): DecisionStateKind<S> {
  return ({ store, model, log }) => new TieredDecisionState(store, model, options, log);
}

export class TieredDecisionState<S> implements DecisionState<S> {
  readonly state: S;
  readonly head = new HeadPosition();
  private readonly journal: Journal;

  constructor(
    private readonly store: EventStore,
    private readonly model: StateModel<S>,
    private readonly options: TieredStateOptions,
    private readonly log?: WriterLog,
  ) {
    this.state = model.initialState();
    this.journal = model.journal(this.state);
    this.journal.tiered = true;
  }

  /**
   * Starts from the stored head. A ledger kept before its state was tiered has none stored: its state is built
   * by reading the ledger from the start through the tier, page by page, as entries appended without a writer
   * are taken in, so that memory holds the hot keys only, even while the state of a long ledger is built.
   */
  async start(): Promise<void> {
    const stored = await this.options.tier.head(this.model.snapshotVersion);
    if (stored && (await storeHoldsHead(this.store, stored.seq, stored.hash))) {
      this.head.moveTo(stored);
    } else {
      if (stored) this.log?.warn({ seq: stored.seq }, 'stored decision state ignored: the event store does not hold its head');
      await this.options.tier.reset(this.model.snapshotVersion, this.options.lockStream);
    }
    await this.catchUp();
  }

  /** Between batches only: a batch's writes stay in memory until it is committed or rolled back. */
  trim(): void {
    this.evictExcept([]);
  }

  /** Evicts, but keeps the keys of writes not stored yet. */
  private evictExcept(pending: readonly StateWrite[]): void {
    this.journal.evict(this.options.hotKeys ?? DEFAULT_HOT_KEYS, pending);
  }

  /** Loads cold keys into memory (as they are stored: committed state). */
  async load(keys: ColdRead[]): Promise<void> {
    const wanted = new Map<string, { map: string; key: string }>();
    for (const { map, key } of keys) wanted.set(`${map}\u0000${key}`, { map, key });
    const found = await this.options.tier.load([...wanted.values()]);
    for (const row of found) {
      this.journal.map(row.map)?.fill(row.key, row.value);
      wanted.delete(`${row.map}\u0000${row.key}`);
    }
    for (const { map, key } of wanted.values()) this.journal.map(map)?.fill(key, undefined);
  }

  /** The batch's writes and the head they bring the state to, stored in the append's transaction. */
  appendOptions(head: StateHead): AppendOptions {
    const writes = this.journal.writes();
    return { alongside: (trx) => this.options.tier.writeIn(trx, writes, head) };
  }

  committed(head: StateHead): void {
    this.head.moveTo(head);
    this.trim();
  }

  /** Every append stores the state with it: there is nothing more to save. */
  async saveSnapshot(): Promise<void> {}

  /**
   * Other writers stored their state with their entries: when the stored head moved, what memory holds may
   * be stale and is dropped. Entries stored without a writer (a ledger kept before its state was tiered, or
   * bulk-loaded) are evolved here and stored page by page, each page's state written while the next is read
   * and evolved. Memory is trimmed to the hot keys between pages, except for the keys of the page whose write
   * is in flight: a key not in memory is then always read from a stored state as new as memory's.
   */
  async catchUp(): Promise<void> {
    const { tier } = this.options;
    const journal = this.journal;
    const stored = await tier.head(this.model.snapshotVersion);
    if (stored && stored.seq > this.head.seq) {
      journal.forgetAll();
      this.head.moveTo(stored);
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
        this.head.moveTo(head);
        return true;
      }
      journal.forgetAll();
      const now = await tier.head(this.model.snapshotVersion);
      if (now) this.head.moveTo(now);
      return false;
    };
    try {
      for (;;) {
        const from = writing ? writing.head.seq : this.head.seq;
        const entries = (await readLedger(this.store, from + 1, this.options.catchUpPage ?? CATCH_UP_PAGE)).map(({ entry }) => entry);
        if (entries.length === 0) break;
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
        const head = { seq: last.seq, hash: last.hash, at: Math.max(this.head.at, ...entries.map((e) => e.at)) };
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
    this.trim();
  }
}
