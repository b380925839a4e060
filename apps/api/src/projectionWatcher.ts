import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { readCheckpoint } from '@svc/projections';
import type { Kysely } from 'kysely';

/**
 * While the bus is up, a waiting read still looks at the checkpoint this often: a notification may be lost
 * (at most once), or the projector's own link to the broker may be down while this process's is up.
 */
const SAFETY_POLL_MS = 100;

/** What the live hubs need from the watcher to follow the read models without the bus. */
export interface CheckpointFollower {
  /** How far the read models are known to be. */
  readonly seq: number;
  /** Calls `listener` with every new position, however it was learnt; returns the function that stops it. */
  onAdvance(listener: (seq: number) => void): () => void;
  /** While held, the position is kept current by reading the checkpoint when the bus is down. Returns the release. */
  follow(): () => void;
}

/**
 * Knows how far the read models have got and lets a read wait (bounded) until they reach a ledger position.
 * The checkpoint in the database is the truth; the projector's notifications on the bus only bring the news
 * sooner. While someone waits, and the bus is down, the checkpoint is read every `pollMs`.
 */
export class ProjectionWatcher implements CheckpointFollower {
  private position = -1;
  private advancedAt = Date.now();
  private waiters = new Set<{ seq: number; wake(): void }>();
  private readonly listeners = new Set<(seq: number) => void>();
  private followers = 0;
  private pollTimer?: NodeJS.Timeout;
  private stopped = false;
  private unsubscribe?: () => Promise<void>;
  private offHealth?: () => void;

  constructor(
    private readonly bus: Bus,
    private readonly db: Kysely<any>,
    private readonly schema: string,
    private readonly pollMs = 25,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.advance(message.seq));
    this.offHealth = this.bus.onHealth((healthy) => {
      // Announcements made while the bus was down are lost: look once when it returns.
      if (healthy) void this.refresh();
      clearTimeout(this.pollTimer);
      this.pollTimer = undefined;
      this.schedule();
    });
    this.advance(await readCheckpoint(this.db, this.schema).catch(() => -1));
  }

  get seq(): number {
    return this.position;
  }

  /** Whether the projector's announcements reach this process. */
  get busHealthy(): boolean {
    return this.bus.healthy;
  }

  /** How long the read models have been behind `head` without moving; 0 when caught up. */
  async stalledFor(head: number): Promise<number> {
    if (head <= this.position) return 0;
    this.advance(await readCheckpoint(this.db, this.schema));
    return head <= this.position ? 0 : Date.now() - this.advancedAt;
  }

  advance(seq: number): void {
    if (!(seq > this.position)) return;
    this.position = seq;
    this.advancedAt = Date.now();
    for (const waiter of this.waiters) if (waiter.seq <= seq) waiter.wake();
    for (const listener of this.listeners) listener(seq);
  }

  onAdvance(listener: (seq: number) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  follow(): () => void {
    this.followers += 1;
    this.schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.followers -= 1;
    };
  }

  private async refresh(): Promise<void> {
    try {
      this.advance(await readCheckpoint(this.db, this.schema));
    } catch {
      // The database is away too: the next poll, or the caller's own read, reports it.
    }
  }

  private polls(): boolean {
    if (this.stopped) return false;
    return this.waiters.size > 0 || (this.followers > 0 && !this.bus.healthy);
  }

  private schedule(): void {
    if (this.pollTimer || !this.polls()) return;
    const timer = setTimeout(
      async () => {
        await this.refresh();
        if (this.pollTimer === timer) this.pollTimer = undefined;
        this.schedule();
      },
      this.bus.healthy ? SAFETY_POLL_MS : this.pollMs,
    );
    this.pollTimer = timer;
  }

  /** Resolves true once the read models include `seq`, false if `ms` pass first. */
  async waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.position >= seq) return true;
    this.advance(await readCheckpoint(this.db, this.schema));
    if (this.position >= seq) return true;
    return new Promise((resolve) => {
      const waiter = {
        seq,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(async () => {
        this.waiters.delete(waiter);
        await this.refresh();
        resolve(this.position >= seq);
      }, ms);
      this.waiters.add(waiter);
      this.schedule();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    this.offHealth?.();
    await this.unsubscribe?.();
  }
}
