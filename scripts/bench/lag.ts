import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';

interface Seen {
  at: number;
  seq: number;
}

export interface LagFigures {
  /** Milliseconds from a register answer to the first `projected` notification covering its seq. */
  lagsMs: number[];
  /** Answers whose seq no notification covered before the wait ran out. */
  unmatched: number;
}

/**
 * Listens to the projector's `${prefix}:projected` channel and, given when each register answer
 * arrived and its ledger seq, tells how long the row took to become visible.
 */
export class ProjectionLag {
  private readonly subscriber: Redis;
  private readonly seen: Seen[] = [];
  /** Highest seq announced so far, after each notification (non-decreasing, so searchable). */
  private readonly reach: number[] = [];
  private readonly waiters = new Set<{ seq: number; wake(): void }>();

  constructor(
    redisUrl: string,
    private readonly channel: string,
  ) {
    this.subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      const at = performance.now();
      let seq: unknown;
      try {
        seq = (JSON.parse(text) as { seq?: unknown }).seq;
      } catch {
        return;
      }
      if (typeof seq !== 'number') return;
      this.seen.push({ at, seq });
      this.reach.push(Math.max(seq, this.head));
      for (const waiter of this.waiters) if (waiter.seq <= this.head) waiter.wake();
    });
  }

  async start(): Promise<void> {
    await this.subscriber.connect();
    await this.subscriber.subscribe(this.channel);
  }

  get head(): number {
    return this.reach.length ? this.reach[this.reach.length - 1]! : -1;
  }

  /** Resolves true once `seq` has been announced, false after `ms`. */
  waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.head >= seq) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        seq,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        resolve(false);
      }, ms);
      this.waiters.add(waiter);
    });
  }

  lags(answers: ReadonlyArray<{ at: number; seq: number }>): LagFigures {
    const lagsMs: number[] = [];
    let unmatched = 0;
    for (const answer of answers) {
      const i = firstAtLeast(this.reach, answer.seq);
      if (i === this.reach.length) unmatched++;
      // A notification can beat the HTTP answer to this process: that row was visible at once.
      else lagsMs.push(Math.max(0, this.seen[i]!.at - answer.at));
    }
    return { lagsMs, unmatched };
  }

  async close(): Promise<void> {
    this.subscriber.disconnect();
  }
}

function firstAtLeast(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
