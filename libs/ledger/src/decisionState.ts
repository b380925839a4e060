import { GENESIS_HASH } from './chain';
import type { AppendOptions, EventStore } from './eventStore';
import type { ColdRead } from './journal';
import type { StateModel } from './model';

/** A ledger head: the seq and hash of its last entry, and the time entries after it are dated from. */
export interface StateHead {
  seq: number;
  hash: string;
  at: number;
}

export interface WriterLog {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * How the ledger writer keeps the state it decides against. The writer decides, appends and retries; a
 * DecisionState says what starting, catching up with the ledger, loading a key and committing a batch mean
 * for the state it holds: all of it in memory, snapshotted now and then (inMemoryState), or the keys used
 * lately in memory and every key in a table the appends keep in step (tieredState). The writer runs no two
 * of these calls at once, and none while a batch is being decided.
 */
export interface DecisionState<S> {
  /** What decisions are taken against, at `head`. */
  readonly state: S;
  readonly head: StateHead;
  /** Brings the state to the ledger head, from whatever was stored for it (a snapshot, a table), else from seq 0. */
  start(): Promise<void>;
  /** Takes in the entries stored since `head` (by another process, or with no writer at all). */
  catchUp(): Promise<void>;
  /** Fills memory with the committed values of keys a pass read while memory did not hold them. */
  load(cold: ColdRead[]): Promise<void>;
  /** Between batches only: lets go of what memory need not keep. */
  trim(): void;
  /** What the append of the open batch, which brings the state to `head`, must store in its transaction. */
  appendOptions(head: StateHead): AppendOptions;
  /** The open batch is appended and committed in memory: the state is at `head`. */
  committed(head: StateHead): void;
  /** Stores what the next start reads instead of the ledger, if it is not stored with every append (on shutdown). */
  saveSnapshot(): Promise<void>;
}

/** A way of keeping decision state, which the writer builds on its own store, model and log. */
export type DecisionStateKind<S> = (ledger: { store: EventStore; model: StateModel<S>; log?: WriterLog }) => DecisionState<S>;

/** Where a decision state is on the ledger. Entries are dated from `at`, which never goes back. */
export class HeadPosition implements StateHead {
  seq = -1;
  hash = GENESIS_HASH;
  at = 0;

  moveTo(head: StateHead): void {
    this.seq = head.seq;
    this.hash = head.hash;
    this.at = Math.max(this.at, head.at);
  }
}
