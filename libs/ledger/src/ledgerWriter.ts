import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { sealAndEncode, type LedgerEntry } from './chain';
import type { DecisionState, DecisionStateKind, StateHead, WriterLog } from './decisionState';
import { type EventStore, WrongExpectedRevisionError } from './eventStore';
import { HeadReader } from './headReader';
import { inMemoryState } from './inMemoryState';
import type { ColdRead } from './journal';
import { LEDGER_STREAM } from './ledgerStream';
import type { LedgerModel, Rejection } from './model';

export type CommandOutcome = { ok: true; entries: LedgerEntry[] } | { ok: false; rejection: Rejection };
/** An outcome decided at the true head, with what the reply needs from the state it was decided against. */
export type HeadOutcome<R> = { ok: true; entries: LedgerEntry[]; seen: R } | { ok: false; rejection: Rejection };

/**
 * Work that commits with a command's entries or not at all: run in the append's transaction (the batch's), given the
 * entries this command appended. Not run when the command appends nothing, when the append turns out to be a retry
 * of one already stored, or by a store without transactions: the caller sees that and does the work itself.
 */
export type Alongside = (trx: Kysely<any>, entries: LedgerEntry[]) => Promise<void>;

interface Pending<C, R> {
  command: C;
  /** Whether the outcome carries what the model's `seen` reads (executeAtHead). */
  withSeen: boolean;
  alongside?: Alongside;
  /** The seq of the last entry before this command when it was last decided. */
  decidedAfter?: number;
  resolve(outcome: HeadOutcome<R> | CommandOutcome): void;
  reject(error: unknown): void;
}

export interface LedgerWriterOptions<S> {
  /** How the decision state is kept (chosen once, by the runtime): in memory unless told otherwise. */
  state?: DecisionStateKind<S>;
  maxBatch?: number;
  now?: () => number;
  onBatch?: (size: number, entries: number) => void;
  log?: WriterLog;
}

const MAX_CONFLICT_RETRIES = 50;
const MAX_STORE_RETRIES = 3;
/**
 * The refusals a newer head can overturn. What else a decider refuses on (a handle taken, a bounty closed, a
 * daily post cap reached) only grows with the ledger; but what it did not find, another process may have
 * appended, and a spending limit is freed again by a release or a loosening another process recorded.
 */
const OVERTURNABLE = new Set(['not_found', 'policy_limit']);

/**
 * The one writer of the `ledger` stream in this process. Commands queue up; each flush decides every
 * queued command in order against state at the ledger head and appends all their events in ONE call
 * (group commit). A revision conflict means another process appended first: roll back, catch up,
 * decide again. How the state is kept (whole in memory, or tiered) is its DecisionState's business.
 */
export class LedgerWriter<S, C, R = unknown> {
  private readonly decisions: DecisionState<S>;
  private queue: Pending<C, R>[] = [];
  private flushing = false;
  /** Batches and catch-ups take turns: state is never evolved by two of them at once. */
  private exclusive: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  /** The stored head, read apart from the writer's turns: one read serves every command asking at once. */
  private readonly storedHead: HeadReader;
  /**
   * Whether the state may be read aside (answerAside): between turns, and while a turn only waits on work that leaves
   * it as committed, give or take the open batch's journaled writes. Not while a turn has it half-way anywhere else.
   */
  private readable = true;
  /** While a turn does nothing but wait for its batch's append: where that append brings the head, and whether it did. */
  private appending?: { seq: number; landed: Promise<boolean> };
  /** Keys the commands queued behind an append will read cold, gathered to be loaded in one read (readAhead). */
  private ahead: ColdRead[] = [];
  /** That read, while it runs: every turn waits for it first, so that nothing it fills lands after a catch-up. */
  private loadingAhead?: Promise<void>;

  constructor(
    private readonly store: EventStore,
    private readonly model: LedgerModel<S, C, R>,
    private readonly options: LedgerWriterOptions<S> = {},
  ) {
    this.decisions = (options.state ?? inMemoryState<S>())({ store, model, log: options.log });
    this.now = options.now ?? Date.now;
    this.storedHead = new HeadReader(() => store.headRevision(LEDGER_STREAM));
  }

  get head(): { seq: number; hash: string } {
    return { seq: this.decisions.head.seq, hash: this.decisions.head.hash };
  }

  /**
   * Read-only access for queries that must agree with the head (e.g. authentication of a citizen). A key
   * the tiered state does not hold in memory is loaded and the read runs again.
   */
  async read<T>(read: (state: S) => T): Promise<T> {
    for (;;) {
      const state = this.decisions.state;
      const { result, cold } = this.model.journal(state).probing(() => read(state));
      if (cold.length === 0) return result;
      // Reads with no writes between them (authentication of many citizens) must not grow memory either:
      // trim first, so that what this read loads stays for its next run.
      await this.turn(async () => {
        this.decisions.trim();
        await this.whileReadable(() => this.decisions.load(cold));
      });
    }
  }

  /** Brings the decision state to the stored head, reading as little of the ledger as its kind allows. */
  start(): Promise<void> {
    return this.turn(() => this.decisions.start());
  }

  /** Brings decision state up to the stored head (e.g. after another process appended). */
  sync(): Promise<void> {
    return this.turn(() => this.decisions.catchUp());
  }

  private turn<T>(work: () => Promise<T>): Promise<T> {
    const inTurn = async () => {
      this.readable = false;
      try {
        const ahead = this.loadingAhead;
        if (ahead) await this.whileReadable(() => ahead);
        return await work();
      } finally {
        this.readable = true;
      }
    };
    const run = this.exclusive.then(inTurn, inTurn);
    this.exclusive = run.catch(() => undefined);
    return run;
  }

  /** Waits on `work`, which only fills memory with committed values or appends the open batch, with the state readable aside meanwhile. */
  private async whileReadable<T>(work: () => Promise<T>): Promise<T> {
    this.readable = true;
    try {
      return await work();
    } finally {
      this.readable = false;
    }
  }

  execute(command: C): Promise<CommandOutcome> {
    return this.enqueue(command, false);
  }

  /**
   * Decides a command at the true ledger head and says what the reply needs from the state it was decided
   * against. An append is always decided there (one after stale state conflicts and is decided again), but some
   * answers touch no store and so may rest on this process's stale view: an overturnable refusal (OVERTURNABLE)
   * and "nothing to append" (another may have changed what this command repeats). Such an answer stands if the
   * stored head, read after it, is still the one it was decided at; otherwise the state is synced and the
   * command decided once more.
   */
  async executeAtHead(command: C, alongside?: Alongside): Promise<HeadOutcome<R>> {
    const aside = await this.answerAside(command);
    if (aside) return aside;
    const pending = this.push(command, true, alongside);
    const outcome = (await pending.outcome) as HeadOutcome<R>;
    if (outcome.ok ? outcome.entries.length > 0 : !OVERTURNABLE.has(outcome.rejection.code)) return outcome;
    // Without this read, the answer would wait for the writer's next turn, behind whatever batch is appending.
    if (pending.decidedAfter !== undefined && (await this.storedHead.head()) === pending.decidedAfter) return outcome;
    await this.sync();
    return this.enqueue(command, true, alongside);
  }

  /**
   * The answer to a command that appends nothing, without waiting for the writer's turn: decided at once against the
   * state as it is, between turns or while a turn waits on the store (`readable`). That state may hold a batch's
   * uncommitted writes, so the answer is taken only if the command read none of them: it is then the answer at the
   * committed head too, and at the head the batch brings. It stands as a turn's answer would (see executeAtHead): a
   * final refusal at once, anything else if the stored head, read after, is one of those two. Otherwise undefined,
   * and the command queues for its turn as any other.
   */
  private async answerAside(command: C): Promise<HeadOutcome<R> | undefined> {
    if (!this.readable) return undefined;
    const appending = this.appending;
    const { state, head } = this.decisions;
    // The head moves on with the next commit: what the answer was decided at is its seq now.
    const decidedAt = head.seq;
    const journal = this.model.journal(state);
    const { result, read } = journal.tracking(() =>
      journal.probing((): HeadOutcome<R> | undefined => {
        const decision = this.model.decide(command, state, Math.max(this.now(), head.at));
        if (!decision.ok) return decision;
        return decision.events.length === 0 ? { ok: true, entries: [], seen: this.model.seen(command, state) } : undefined;
      }),
    );
    const { result: answer, cold } = result;
    if (!answer || cold.length > 0 || (appending && journal.wroteAny(read))) return undefined;
    if (!answer.ok && !OVERTURNABLE.has(answer.rejection.code)) return answer;
    const stored = await this.storedHead.head();
    if (stored === decidedAt) return answer;
    // The batch's own entries, if its append landed: a store holding that many entries otherwise is another writer's.
    if (appending && stored === appending.seq && (await appending.landed)) return answer;
    return undefined;
  }

  /** Whether work can commit with an append (`alongside`): a store with transactions of its own. */
  get appendsInTransaction(): boolean {
    return this.store.kind !== 'esdb';
  }

  private enqueue(command: C, withSeen: false): Promise<CommandOutcome>;
  private enqueue(command: C, withSeen: true, alongside?: Alongside): Promise<HeadOutcome<R>>;
  private enqueue(command: C, withSeen: boolean, alongside?: Alongside): Promise<HeadOutcome<R> | CommandOutcome> {
    return this.push(command, withSeen, alongside).outcome;
  }

  private push(command: C, withSeen: boolean, alongside?: Alongside): Pending<C, R> & { outcome: Promise<HeadOutcome<R> | CommandOutcome> } {
    let pending!: Pending<C, R>;
    const outcome = new Promise<HeadOutcome<R> | CommandOutcome>((resolve, reject) => {
      pending = { command, withSeen, alongside, resolve, reject };
    });
    this.queue.push(pending);
    if (this.appending && this.readable) this.readAhead(command);
    if (!this.flushing) void this.flush();
    return Object.assign(pending, { outcome });
  }

  /**
   * While a batch appends, loads what a command queued behind it will read and memory does not hold (a record's new
   * signature never is), so that its own batch need not stop for the read. The commands queued in the meantime share
   * one read. It fills only keys memory does not hold, with committed values, as a batch's own load would.
   */
  private readAhead(command: C): void {
    const { state, head } = this.decisions;
    const journal = this.model.journal(state);
    let cold: ColdRead[];
    try {
      cold = journal.probing(() => this.model.decide(command, state, Math.max(this.now(), head.at))).cold;
    } catch {
      return;
    }
    if (cold.length === 0) return;
    if (this.ahead.length === 0) {
      queueMicrotask(() => {
        const keys = this.ahead;
        this.ahead = [];
        const loading = (this.loadingAhead ?? Promise.resolve()).then(() => this.decisions.load(keys)).catch(() => undefined);
        this.loadingAhead = loading;
        void loading.then(() => {
          if (this.loadingAhead === loading) this.loadingAhead = undefined;
        });
      });
    }
    this.ahead.push(...cold);
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

  private async commitBatch(batch: Pending<C, R>[]): Promise<void> {
    const journal = this.model.journal(this.decisions.state);
    for (let attempt = 0; ; attempt++) {
      let decided: Decided<R>;
      try {
        decided = await this.decideAll(batch);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      const { outcomes, entries, encoded, at } = decided;
      if (entries.length === 0) {
        journal.commit();
        this.decisions.trim();
        batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
        return;
      }
      const last = entries[entries.length - 1]!;
      const head = { seq: last.seq, hash: last.hash, at };
      const alongside = batch.flatMap((pending, i) => {
        const outcome = outcomes[i]!;
        return pending.alongside && outcome.ok && outcome.entries.length > 0 ? [(trx: Kysely<any>) => pending.alongside!(trx, outcome.entries)] : [];
      });
      let landed!: (ok: boolean) => void;
      this.appending = { seq: head.seq, landed: new Promise<boolean>((resolve) => (landed = resolve)) };
      try {
        await this.whileReadable(() => this.appendWithRetry(entries, encoded, head, alongside));
      } catch (error) {
        this.appending = undefined;
        landed(false);
        journal.rollback();
        await this.loadingAhead;
        if (error instanceof WrongExpectedRevisionError && attempt < MAX_CONFLICT_RETRIES) {
          await backoff(attempt);
          try {
            await this.decisions.catchUp();
          } catch (catchUpError) {
            for (const pending of batch) pending.reject(catchUpError);
            return;
          }
          continue;
        }
        for (const pending of batch) pending.reject(error);
        return;
      }
      this.appending = undefined;
      journal.commit();
      this.decisions.committed(head);
      landed(true);
      this.options.onBatch?.(batch.length, entries.length);
      batch.forEach((pending, i) => pending.resolve(outcomes[i]!));
      return;
    }
  }

  /**
   * Decides every command in order against the head, evolving the state in place under the journal (left
   * open: the caller commits or rolls back). Keys not in memory read as absent and are noted; if any were,
   * the pass is rolled back, they are loaded in one query, and the batch is decided again, until a pass
   * reads only what memory holds.
   */
  private async decideAll(batch: Pending<C, R>[]): Promise<Decided<R>> {
    const journal = this.model.journal(this.decisions.state);
    for (;;) {
      journal.begin();
      let pass: { result: Decided<R>; cold: ColdRead[] };
      try {
        pass = journal.probing(() => this.decidePass(batch));
      } catch (error) {
        journal.rollback();
        throw error;
      }
      if (pass.cold.length === 0) return pass.result;
      journal.rollback();
      await this.whileReadable(() => this.decisions.load(pass.cold));
    }
  }

  private decidePass(batch: Pending<C, R>[]): Decided<R> {
    const { state, head } = this.decisions;
    const outcomes: Array<HeadOutcome<R> | CommandOutcome> = [];
    const entries: LedgerEntry[] = [];
    const encoded: string[] = [];
    let prev = head.hash;
    const at = Math.max(this.now(), head.at);
    for (const pending of batch) {
      pending.decidedAfter = head.seq + entries.length;
      const decision = this.model.decide(pending.command, state, at);
      if (!decision.ok) {
        outcomes.push(decision);
        continue;
      }
      const mine: LedgerEntry[] = [];
      for (const event of decision.events) {
        const { entry, bytes } = sealAndEncode(prev, { seq: head.seq + 1 + entries.length, type: event.type, at, actor: event.actor, data: event.data });
        this.model.evolve(state, entry);
        entries.push(entry);
        encoded.push(bytes);
        mine.push(entry);
        prev = entry.hash;
      }
      outcomes.push(pending.withSeen ? { ok: true, entries: mine, seen: this.model.seen(pending.command, state) } : { ok: true, entries: mine });
    }
    return { outcomes, entries, encoded, at };
  }

  /** An ambiguous store error is retried with the same event ids, so an append that did land is not doubled. */
  private async appendWithRetry(entries: LedgerEntry[], encoded: string[], head: StateHead, alongside: Array<(trx: Kysely<any>) => Promise<void>>): Promise<void> {
    const events = entries.map((entry, i) => ({ id: randomUUID(), type: entry.type, data: encoded[i]! }));
    const headSeq = this.decisions.head.seq;
    const expected = headSeq === -1 ? 'no_stream' : headSeq;
    const state = this.decisions.appendOptions(head);
    const options =
      alongside.length === 0 || !this.appendsInTransaction
        ? state
        : {
            // Together: works that write one table can join in one statement (see ChainOutbox.markDoneIn). Each ends
            // before the transaction does, whichever fails.
            alongside: async (trx: Kysely<any>) => {
              const works = await Promise.allSettled([state.alongside?.(trx), ...alongside.map((work) => work(trx))]);
              const failed = works.find((work) => work.status === 'rejected');
              if (failed) throw failed.reason;
            },
          };
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

  /** Stores the decision state for the next start, if its kind does not with every append (on shutdown). */
  saveSnapshot(): Promise<void> {
    return this.decisions.saveSnapshot();
  }
}

interface Decided<R> {
  outcomes: Array<HeadOutcome<R> | CommandOutcome>;
  entries: LedgerEntry[];
  encoded: string[];
  at: number;
}

function backoff(attempt: number): Promise<void> {
  const ms = Math.min(200, 2 ** Math.min(attempt, 7)) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
