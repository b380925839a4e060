import { HeadPosition, type DecisionState, type DecisionStateKind, type StateHead, type WriterLog } from './decisionState';
import type { AppendOptions, EventStore } from './eventStore';
import { LEDGER_STREAM, readLedger, storeHoldsHead } from './ledgerStream';
import type { StateModel } from './model';
import type { Snapshot, SnapshotStore } from './snapshotStore';

export interface InMemoryStateOptions {
  /** Where the state is snapshotted, so that a start reads only the ledger's tail. None: every start reads it all. */
  snapshots?: SnapshotStore;
  /** Entries between snapshots (1,000). */
  snapshotEvery?: number;
}

const CATCH_UP_PAGE = 1000;

/**
 * The whole decision state in memory, snapshotted every `snapshotEvery` entries: for an event store with no
 * transaction an append could share (EventStoreDB), and for tools and tests that hold a ledger whole.
 */
export function inMemoryState<S>(options: InMemoryStateOptions = {}): DecisionStateKind<S> {
  return ({ store, model, log }) => new InMemoryDecisionState(store, model, options, log);
}

export class InMemoryDecisionState<S> implements DecisionState<S> {
  state: S;
  readonly head = new HeadPosition();
  private lastSnapshotSeq = -1;
  private snapshotting = false;

  constructor(
    private readonly store: EventStore,
    private readonly model: StateModel<S>,
    private readonly options: InMemoryStateOptions,
    private readonly log?: WriterLog,
  ) {
    this.state = model.initialState();
  }

  /** Loads the newest snapshot, then reads only the tail of the ledger. */
  async start(): Promise<void> {
    const snapshot = await this.options.snapshots?.load(LEDGER_STREAM);
    if (snapshot && snapshot.version === this.model.snapshotVersion && (await storeHoldsHead(this.store, snapshot.seq, snapshot.hash))) {
      this.state = this.model.restore(snapshot.state);
      this.head.moveTo(snapshot);
      this.lastSnapshotSeq = snapshot.seq;
    } else if (snapshot) {
      this.log?.warn({ seq: snapshot.seq }, 'snapshot ignored: another version, or the event store does not hold its head');
    }
    await this.catchUp();
  }

  async catchUp(): Promise<void> {
    for (;;) {
      const page = await readLedger(this.store, this.head.seq + 1, CATCH_UP_PAGE);
      for (const { stored, entry } of page) {
        this.model.evolve(this.state, entry);
        this.head.moveTo({ seq: stored.revision, hash: entry.hash, at: entry.at });
      }
      if (page.length < CATCH_UP_PAGE) return;
    }
  }

  /** Memory holds every key: a read never misses. */
  async load(): Promise<void> {
    throw new Error('a decision-state key is cold, but the state is not tiered');
  }

  trim(): void {}

  appendOptions(): AppendOptions {
    return {};
  }

  committed(head: StateHead): void {
    this.head.moveTo(head);
    if (!this.options.snapshots || this.snapshotting || this.head.seq - this.lastSnapshotSeq < (this.options.snapshotEvery ?? 1000)) return;
    this.snapshotting = true;
    // Serialised now, while the state is exactly the committed head; written in the background.
    const snapshot = this.takeSnapshot();
    this.options.snapshots
      .save(snapshot)
      .then(() => (this.lastSnapshotSeq = snapshot.seq))
      .catch((error) => this.log?.error({ err: error }, 'snapshot failed; the next one will try again'))
      .finally(() => (this.snapshotting = false));
  }

  async saveSnapshot(): Promise<void> {
    if (!this.options.snapshots || this.head.seq < 0 || this.head.seq === this.lastSnapshotSeq) return;
    const snapshot = this.takeSnapshot();
    await this.options.snapshots.save(snapshot);
    this.lastSnapshotSeq = snapshot.seq;
  }

  private takeSnapshot(): Snapshot {
    const { seq, hash, at } = this.head;
    return { name: LEDGER_STREAM, version: this.model.snapshotVersion, seq, hash, at, state: this.model.snapshot(this.state) };
  }
}
