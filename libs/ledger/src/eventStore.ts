import type { Kysely } from 'kysely';
/** The event store port. The PostgreSQL and EventStoreDB adapters pass one contract suite. */

export interface NewEvent {
  /** A UUID; appending the same ids again at the same place is a no-op, not a duplicate. */
  id: string;
  type: string;
  /** The exact bytes to keep (UTF-8 JSON text). */
  data: string;
}

export interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
}

/** The revision the caller last saw: a number, `'no_stream'` for an empty stream, or `'any'`. */
export type ExpectedRevision = number | 'no_stream' | 'any';

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextRevision: number;
  /** True when every event was already there (an idempotent re-append). */
  duplicate: boolean;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

export interface AppendOptions {
  /**
   * Work that must commit with the events or not at all, run in the append's transaction after they are
   * written (a store without transactions refuses it). Not run when the append turns out to be a retry
   * of one already stored.
   */
  alongside?: (trx: Kysely<any>) => Promise<void>;
}

export interface EventStore {
  readonly kind: string;
  append(stream: string, events: NewEvent[], expected: ExpectedRevision, options?: AppendOptions): Promise<AppendResult>;
  /** Events with revision >= from, in order, at most maxCount. */
  readForward(stream: string, from: number, maxCount: number): Promise<StoredEvent[]>;
  /** Revision of the last event, or -1 for an empty stream. */
  headRevision(stream: string): Promise<number>;
  /**
   * Catch-up subscription: every event from revision `from` on, then live ones, in order.
   * Ends when the signal aborts.
   */
  subscribe(stream: string, from: number, signal: AbortSignal): AsyncIterable<StoredEvent>;
  close(): Promise<void>;
}

/** Waits until `wake` is called or `ms` pass, whichever is first; resolves early when the signal aborts. */
export function waitForWake(ms: number, signal: AbortSignal, register: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unregister();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    const unregister = register(finish);
    signal.addEventListener('abort', finish);
  });
}
