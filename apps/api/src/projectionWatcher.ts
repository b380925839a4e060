import { PROJECTED_CHANNEL, type Bus, type Notification } from '@svc/bus';
import { lowestOf, readCheckpoints } from '@svc/projections';
import type { Kysely } from 'kysely';

/**
 * While the bus is up, a waiting read still looks at the checkpoints this often: a notification may be lost
 * (at most once), or the projector's own link to the broker may be down while this process's is up.
 */
const SAFETY_POLL_MS = 100;

/** What the live hubs need from the watcher to follow the read models they read without the bus. */
export interface CheckpointFollower {
  /** How far the read models followed are known to be. */
  readonly seq: number;
  /** Calls `listener` with every new position, however it was learnt; returns the function that stops it. */
  onAdvance(listener: (seq: number) => void): () => void;
  /** While held, the position is kept current by reading the checkpoints when the bus is down. Returns the release. */
  follow(): () => void;
}

interface Waiter {
  seq: number;
  names: readonly string[];
  wake(): void;
}

interface Listener {
  names: readonly string[];
  last: number;
  listener(seq: number): void;
}

/**
 * Knows how far each read model (projection) has got and lets a read wait (bounded) until the ones it reads
 * reach a ledger position. The checkpoints in the database are the truth; the projector's notifications on
 * the bus only bring the news sooner. While someone waits, and the bus is down, the checkpoints are read every
 * `pollMs`. A position that names no projections is that of every projection the watcher knows.
 */
export class ProjectionWatcher implements CheckpointFollower {
  private readonly positions = new Map<string, number>();
  private readonly advancedAt = new Map<string, number>();
  private waiters = new Set<Waiter>();
  private readonly listeners = new Set<Listener>();
  private followers = 0;
  private pollTimer?: NodeJS.Timeout;
  private stopped = false;
  private unsubscribe?: () => Promise<void>;
  private offHealth?: () => void;

  constructor(
    private readonly bus: Bus,
    private readonly db: Kysely<any>,
    private readonly schema: string,
    /** The projections this process serves from. */
    private readonly names: readonly string[],
    private readonly pollMs = 25,
  ) {
    const now = Date.now();
    for (const name of names) {
      this.positions.set(name, -1);
      this.advancedAt.set(name, now);
    }
  }

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.announced(message));
    this.offHealth = this.bus.onHealth((healthy) => {
      // Announcements made while the bus was down are lost: look once when it returns.
      if (healthy) void this.refresh();
      clearTimeout(this.pollTimer);
      this.pollTimer = undefined;
      this.schedule();
    });
    await this.refresh();
  }

  /** How far every read model is known to be. */
  get seq(): number {
    return this.positionOf();
  }

  /** How far all of the named read models are known to be (all of them when none are named). */
  positionOf(names: readonly string[] = this.names): number {
    return lowestOf(this.positions, names);
  }

  /** Each read model and how far it is known to be. */
  get readModels(): Record<string, number> {
    return Object.fromEntries(this.positions);
  }

  /** The named read models as one position to follow (see CheckpointFollower). */
  follower(names: readonly string[]): CheckpointFollower {
    const seq = () => this.positionOf(names);
    return {
      get seq() {
        return seq();
      },
      onAdvance: (listener) => this.onAdvance(listener, names),
      follow: () => this.follow(),
    };
  }

  /** Whether the projector's announcements reach this process. */
  get busHealthy(): boolean {
    return this.bus.healthy;
  }

  /** How long some read model has been behind `head` without moving, the longest of them; 0 when all are caught up. */
  async stalledFor(head: number): Promise<number> {
    if (head <= this.seq) return 0;
    this.update(await readCheckpoints(this.db, this.schema));
    const now = Date.now();
    const behind = this.names.filter((name) => this.positionOf([name]) < head);
    return Math.max(0, ...behind.map((name) => now - this.advancedAt.get(name)!));
  }

  private announced(message: Notification): void {
    const listed: unknown = message.projections;
    const named = Array.isArray(listed) ? listed.filter((name): name is string => typeof name === 'string') : this.names;
    this.update(named.map((name) => [name, message.seq] as const));
  }

  /** Takes in positions learnt from the bus or the database; a read model never moves back, and one this process does not serve is ignored. */
  private update(positions: Iterable<readonly [string, number]>): void {
    const now = Date.now();
    let moved = false;
    for (const [name, seq] of positions) {
      const at = this.positions.get(name);
      if (at === undefined || !(seq > at)) continue;
      this.positions.set(name, seq);
      this.advancedAt.set(name, now);
      moved = true;
    }
    if (!moved) return;
    for (const waiter of this.waiters) if (this.positionOf(waiter.names) >= waiter.seq) waiter.wake();
    for (const entry of this.listeners) {
      const seq = this.positionOf(entry.names);
      if (seq <= entry.last) continue;
      entry.last = seq;
      entry.listener(seq);
    }
  }

  onAdvance(listener: (seq: number) => void, names: readonly string[] = this.names): () => void {
    const entry: Listener = { names, last: this.positionOf(names), listener };
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
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
      this.update(await readCheckpoints(this.db, this.schema));
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

  /** Resolves true once the named read models (every one when none are named) include `seq`, false if `ms` pass first. */
  async waitFor(seq: number, ms: number, names: readonly string[] = this.names): Promise<boolean> {
    if (this.positionOf(names) >= seq) return true;
    this.update(await readCheckpoints(this.db, this.schema));
    if (this.positionOf(names) >= seq) return true;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        seq,
        names,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(async () => {
        this.waiters.delete(waiter);
        await this.refresh();
        resolve(this.positionOf(names) >= seq);
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
