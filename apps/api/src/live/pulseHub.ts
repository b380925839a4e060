import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { LONG_POLL_MAX_SECONDS } from '@svc/contracts';
import type { CheckpointFollower } from '../projectionWatcher';
import { boardEtag, type Board } from './board';

export const MAX_WAIT_SECONDS = LONG_POLL_MAX_SECONDS;
/** The bus channel on which an ack says that a citizen's has_new_for_you may have changed. */
export const INBOX_ACKED_CHANNEL = 'inbox_acked';
/** How long stop() lets the held requests it woke take to be answered. */
const STOP_GRACE_MS = 2_000;
const DAY_MS = 86_400_000;

export interface BoardState {
  board: Board;
  etag: string;
}

/** Why a held request was let go. */
export type Wake = 'changed' | 'acked' | 'timeout' | 'aborted' | 'stopping';

export interface WaitOptions {
  seconds: number;
  /** Aborting it lets the request go (its client left, or it no longer waits). */
  signal: AbortSignal;
  /** The citizen whose has_new_for_you the request carries: an ack of theirs lets it go too. */
  agentId?: string;
  /** Settles once the request has been answered or its client has gone; stop() waits for it. */
  answered?: Promise<unknown>;
}

interface Waiter {
  /** What lets it go: the board's ETag no longer the one the request last saw, or the ledger position passing a seq. */
  until: { etag: string } | { past: number };
  agentId?: string;
  answered?: Promise<unknown>;
  wake(why: Wake): void;
}

/**
 * Holds /pulse?wait= requests in memory and wakes them from the bus: one board read per ledger change
 * (changes during a read coalesce into one more read), whatever the number of waiters, and none while no
 * request waits on the board: a busy ledger must not cost a board read per projected batch that no one asked for.
 * Nothing polls the database while the board is still and the bus is up; while it is down, the held
 * requests follow the projection checkpoint instead, so that no change is missed. /changes?wait= is held here
 * too, on the ledger position alone (`waitPast`), which costs no read at all.
 */
export class PulseHub {
  private readonly waiters = new Set<Waiter>();
  /** How many of the waiters wait on the board (not on a position): only they need it read. */
  private boardWaiters = 0;
  private readonly byAgent = new Map<string, Set<Waiter>>();
  /** The latest read started, and the ledger position and UTC day it stands for. */
  private current?: { state: Promise<BoardState>; seq: number; day: number };
  /** The newest read that succeeded; `generation` orders reads, which may finish out of order. */
  private settled?: { state: BoardState; generation: number };
  private generation = 0;
  private refreshing = false;
  private again = false;
  private latestSeq = -1;
  private unsubscribes: Array<() => Promise<void>> = [];
  private stopping?: Promise<void>;
  private releaseFollow?: () => void;

  constructor(
    private readonly bus: Bus,
    private readonly load: () => Promise<Board>,
    /** How far the read models are known to be; a board read before that is stale. */
    private readonly position: () => number,
    /**
     * The position of the board's read models: announces each one they all reach, and keeps it current while
     * the bus is down, for as long as requests are held.
     */
    private readonly checkpoint?: CheckpointFollower,
  ) {}

  get held(): number {
    return this.waiters.size;
  }

  async start(): Promise<void> {
    const checkpoint = this.checkpoint;
    if (checkpoint) {
      // The follower hears the projector's announcements of the read models the board reads, and moves only
      // once all of them have: an announcement of one alone would have the board read before the others.
      const stop = checkpoint.onAdvance((seq) => this.changed(seq));
      this.unsubscribes.push(async () => stop());
    } else {
      this.unsubscribes.push(await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.changed(message.seq)));
    }
    this.unsubscribes.push(await this.bus.subscribe(INBOX_ACKED_CHANNEL, (message) => this.acked(message.agent_id)));
  }

  /** The board now; read again only when the ledger moved or the UTC day turned (posts_today). */
  state(): Promise<BoardState> {
    const day = Math.floor(Date.now() / DAY_MS);
    const seq = Math.max(this.position(), this.latestSeq);
    if (!this.current || this.current.day !== day || this.current.seq < seq) this.current = this.read(seq, day);
    return this.current.state;
  }

  private read(seq: number, day: number): { state: Promise<BoardState>; seq: number; day: number } {
    const generation = ++this.generation;
    const state = this.load().then((board) => ({ board, etag: boardEtag(board) }));
    const current = { state, seq, day };
    state.then(
      (fresh) => this.settle(fresh, generation),
      () => {
        // A failed read is not kept: the next caller reads again instead of getting the same error.
        if (this.current === current) this.current = undefined;
      },
    );
    return current;
  }

  /** Every read that succeeds wakes the waiters whose board it no longer is, whoever started it. */
  private settle(state: BoardState, generation: number): void {
    if (this.settled && this.settled.generation > generation) return;
    this.settled = { state, generation };
    for (const waiter of this.waiters) if ('etag' in waiter.until && waiter.until.etag !== state.etag) waiter.wake('changed');
  }

  private changed(seq: number): void {
    if (!(seq > this.latestSeq)) return;
    this.latestSeq = seq;
    for (const waiter of this.waiters) if ('past' in waiter.until && seq > waiter.until.past) waiter.wake('changed');
    // Read lazily otherwise: the next state() reads, since the position moved.
    if (this.boardWaiters > 0) void this.refresh();
  }

  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.again = false;
        // A failed read wakes nobody; the next change, or the next request, reads again.
        await this.state().catch(() => undefined);
      } while (this.again);
    } finally {
      this.refreshing = false;
    }
  }

  private acked(agentId: unknown): void {
    if (typeof agentId !== 'string') return;
    for (const waiter of this.byAgent.get(agentId) ?? []) waiter.wake('acked');
  }

  /** Tells every process that this citizen acked, so that their held keyed requests look again. */
  async announceAck(agentId: string): Promise<void> {
    // The bus would bring it back to this process too; while it is down, this process at least hears it.
    if (!this.bus.healthy) this.acked(agentId);
    await this.bus.publish(INBOX_ACKED_CHANNEL, { kind: 'inbox_acked', seq: -1, agent_id: agentId });
  }

  /**
   * Holds a request, registered at once, until the board's ETag is no longer `baseline` (or, with an
   * agent id, that citizen acks), `seconds` pass, the signal aborts or the hub stops. A board that changed
   * before this call, while the caller was busy, lets it go at once.
   */
  wait(baseline: string, options: WaitOptions): Promise<Wake> {
    return this.hold({ etag: baseline }, options, this.settled !== undefined && this.settled.state.etag !== baseline);
  }

  /**
   * Holds a request until the read models of the board (the entries among them) pass `seq`, as wait() does
   * otherwise: the time, the signal and stop() let it go too.
   */
  waitPast(seq: number, options: WaitOptions): Promise<Wake> {
    return this.hold({ past: seq }, options, Math.max(this.position(), this.latestSeq) > seq);
  }

  private hold(until: Waiter['until'], options: WaitOptions, changedAlready: boolean): Promise<Wake> {
    if (this.stopping) return Promise.resolve('stopping');
    if (options.signal.aborted) return Promise.resolve('aborted');
    if (changedAlready) return Promise.resolve('changed');
    return new Promise((resolve) => {
      const { agentId } = options;
      const onBoard = 'etag' in until;
      const waiter: Waiter = {
        until,
        agentId,
        answered: options.answered,
        wake: (why) => {
          clearTimeout(timer);
          options.signal.removeEventListener('abort', abort);
          if (!this.waiters.delete(waiter)) return;
          if (onBoard) this.boardWaiters -= 1;
          if (this.waiters.size === 0) {
            this.releaseFollow?.();
            this.releaseFollow = undefined;
          }
          if (agentId !== undefined) {
            const mine = this.byAgent.get(agentId);
            mine?.delete(waiter);
            if (mine?.size === 0) this.byAgent.delete(agentId);
          }
          resolve(why);
        },
      };
      const abort = () => waiter.wake('aborted');
      const timer = setTimeout(() => waiter.wake('timeout'), Math.max(0, options.seconds) * 1000);
      options.signal.addEventListener('abort', abort);
      this.waiters.add(waiter);
      if (onBoard) this.boardWaiters += 1;
      this.releaseFollow ??= this.checkpoint?.follow();
      // A change heard while no one was held was not read: the board the caller holds may be behind it.
      if (onBoard && (!this.current || this.current.seq < this.latestSeq)) void this.refresh();
      if (agentId !== undefined) {
        const mine = this.byAgent.get(agentId) ?? new Set<Waiter>();
        mine.add(waiter);
        this.byAgent.set(agentId, mine);
      }
    });
  }

  /**
   * Lets every held request go with 'stopping' and waits (briefly) until they are answered, so that a
   * shutdown answers them instead of resetting their connections. Later waits return 'stopping' at once.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const held = [...this.waiters];
      for (const waiter of held) waiter.wake('stopping');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(held.map((waiter) => waiter.answered)),
        new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS))),
      ]);
      clearTimeout(timer);
      await Promise.all(this.unsubscribes.map((unsubscribe) => unsubscribe().catch(() => undefined)));
    })();
    return this.stopping;
  }
}
