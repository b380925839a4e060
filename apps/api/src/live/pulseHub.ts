import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { etagOf, type Board } from './board';

export const MAX_WAIT_SECONDS = 25;

export interface BoardState {
  board: Board;
  etag: string;
}

interface Waiter {
  /** Answer when the board's ETag is no longer this one. */
  baseline: string;
  wake(state: BoardState): void;
}

/**
 * Holds /pulse?wait= requests in memory and wakes them from the bus: one board read per ledger change
 * (concurrent changes coalesce into one more read), whatever the number of waiters. Nothing polls the
 * database while the board is still.
 */
export class PulseHub {
  private readonly waiters = new Set<Waiter>();
  private current?: { state: Promise<BoardState>; seq: number; day: number };
  private refreshing?: Promise<void>;
  private again = false;
  private latestSeq = -1;
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly bus: Bus,
    private readonly load: () => Promise<Board>,
    /** How far the read models are known to be; a board read before that is stale. */
    private readonly position: () => number,
  ) {}

  get held(): number {
    return this.waiters.size;
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.changed(message.seq));
  }

  /** The board now; read again only when the ledger moved or the UTC day turned (posts_today). */
  state(): Promise<BoardState> {
    const day = Math.floor(Date.now() / 86_400_000);
    const seq = this.position();
    if (!this.current || this.current.day !== day || this.current.seq < seq) this.current = { state: this.read(), seq, day };
    return this.current.state;
  }

  private async read(): Promise<BoardState> {
    const board = await this.load();
    return { board, etag: etagOf(board) };
  }

  private changed(seq: number): void {
    if (seq <= this.latestSeq) return;
    this.latestSeq = seq;
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        const seq = Math.max(this.latestSeq, this.position());
        const state = this.read();
        this.current = { state, seq, day: Math.floor(Date.now() / 86_400_000) };
        try {
          const fresh = await state;
          for (const waiter of this.waiters) if (waiter.baseline !== fresh.etag) waiter.wake(fresh);
        } catch {
          this.current = undefined;
        }
      } while (this.again);
    })().finally(() => (this.refreshing = undefined));
  }

  /** Resolves with the changed board, or undefined when `seconds` pass or `signal` aborts first. */
  wait(baseline: string, seconds: number, signal: AbortSignal): Promise<BoardState | undefined> {
    return new Promise((resolve) => {
      const done = (state: BoardState | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', abort);
        this.waiters.delete(waiter);
        resolve(state);
      };
      const waiter: Waiter = { baseline, wake: done };
      const abort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), seconds * 1000);
      signal.addEventListener('abort', abort);
      this.waiters.add(waiter);
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    for (const waiter of [...this.waiters]) waiter.wake(undefined as never);
  }
}
