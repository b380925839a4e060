import { randomUUID } from 'node:crypto';
import { GENESIS_HASH, sealAndEncode, type LedgerEntry } from './chain';
import { type EventStore, WrongExpectedRevisionError } from './eventStore';
import type { LedgerModel, Rejection } from './model';
import type { SnapshotStore } from './snapshotStore';

export const LEDGER_STREAM = 'ledger';

export type CommandOutcome = { ok: true; entries: LedgerEntry[] } | { ok: false; rejection: Rejection };

interface Pending<C> {
  command: C;
  resolve(outcome: CommandOutcome): void;
  reject(error: unknown): void;
}

export interface LedgerWriterOptions {
  snapshots?: SnapshotStore;
  snapshotEvery?: number;
  maxBatch?: number;
  now?: () => number;
  onBatch?: (size: number, entries: number) => void;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

const MAX_CONFLICT_RETRIES = 50;
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

  /** Read-only access for queries that must agree with the head (e.g. authentication of a citizen). */
  view<T>(read: (state: S) => T): T {
    return read(this.state);
  }

  /** Loads the newest snapshot, then reads only the tail of the ledger. */
  async start(): Promise<void> {
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
    await this.catchUp();
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

  private async catchUp(): Promise<void> {
    for (;;) {
      const batch = await this.store.readForward(LEDGER_STREAM, this.headSeq + 1, 1000);
      for (const stored of batch) {
        const entry = JSON.parse(stored.data) as LedgerEntry;
        this.model.evolve(this.state, entry);
        this.headSeq = stored.revision;
        this.headHash = entry.hash;
        this.headAt = Math.max(this.headAt, entry.at);
      }
      if (batch.length < 1000) return;
    }
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
      journal.begin();
      const outcomes: CommandOutcome[] = [];
      const entries: LedgerEntry[] = [];
      const encoded: string[] = [];
      let prev = this.headHash;
      let at = Math.max(this.now(), this.headAt);
      try {
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
      } catch (error) {
        journal.rollback();
        for (const pending of batch) pending.reject(error);
        return;
      }
      if (entries.length === 0) {
        journal.commit();
        batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
        return;
      }
      try {
        await this.appendWithRetry(entries, encoded);
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
      const last = entries[entries.length - 1]!;
      this.headSeq = last.seq;
      this.headHash = last.hash;
      this.headAt = at;
      this.options.onBatch?.(batch.length, entries.length);
      batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
      this.maybeSnapshot();
      return;
    }
  }

  /** An ambiguous store error is retried with the same event ids, so an append that did land is not doubled. */
  private async appendWithRetry(entries: LedgerEntry[], encoded: string[]): Promise<void> {
    const events = entries.map((entry, i) => ({ id: randomUUID(), type: entry.type, data: encoded[i]! }));
    const expected = this.headSeq === -1 ? 'no_stream' : this.headSeq;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.append(LEDGER_STREAM, events, expected);
        return;
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError || attempt >= MAX_STORE_RETRIES) throw error;
        this.options.log?.warn({ err: error, attempt }, 'ledger append failed; retrying with the same event ids');
        await backoff(attempt);
      }
    }
  }

  private maybeSnapshot(): void {
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
    if (!this.options.snapshots || this.headSeq < 0 || this.headSeq === this.lastSnapshotSeq) return;
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

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(200, 2 ** Math.min(attempt, 7)) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
