// The pure part of the ledger: what a decider returns and the journal its state is kept in. libs/domain
// imports only this entry (`@svc/ledger/model`), never the barrel, which loads the event-store adapters.
import type { LedgerEntry } from './chain';
import type { Journal } from './journal';

export { ColdKey, Journal, JournaledMap, type ColdRead } from './journal';
export type { LedgerEntry } from './chain';

/** What a decider emits; the writer gives it its seq, time, prev and hash. */
export interface ProposedEvent {
  type: string;
  actor: string;
  data: Record<string, unknown>;
}

export interface Rejection {
  code: string;
  message: string;
  /** Extra fields for the error envelope, e.g. `used` and `cap` of a daily cap. */
  details?: Record<string, unknown>;
}

export type Decision = { ok: true; events: ProposedEvent[] } | { ok: false; rejection: Rejection };

/** What keeping decision state needs of the model: build it, evolve it, snapshot it. */
export interface StateModel<S> {
  /** Bump when the state's shape changes, so an old snapshot is ignored rather than misread. */
  readonly snapshotVersion: number;
  initialState(): S;
  /** Applies an entry; writes go through the state's journal so a batch can be rolled back. */
  evolve(state: S, entry: LedgerEntry): void;
  journal(state: S): Journal;
  snapshot(state: S): unknown;
  restore(json: unknown): S;
}

/**
 * The whole-ledger decision model: pure decide, in-place evolve under the state's journal. `R` is what a reply
 * needs from the state beside a command's own events (e.g. the actor's handle).
 */
export interface LedgerModel<S, C, R = unknown> extends StateModel<S> {
  decide(command: C, state: S, now: number): Decision;
  /**
   * What a reply to an accepted command needs from the state, as the command's own events left it: read in the
   * same pass as the decision, so that a reply is built without reading the writer again after the append.
   */
  seen(command: C, state: S): R;
}
