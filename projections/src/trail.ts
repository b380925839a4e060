import type { StoredEvent } from '@svc/ledger';
import type { Projection } from './projection';

/** What a trail asks of the projector it follows. */
export interface TrailProjector {
  /** Applies a batch to `among`; throws only if none of them could apply it. */
  applyLive(batch: StoredEvent[], among: readonly Projection[]): Promise<void>;
  /** Takes the checkpoints again after a batch failed. */
  recover(error: unknown): Promise<void>;
}

/** Queued live events past which the leading projections wait for the trail: it stays within a few batches. */
export const TRAIL_BATCHES = 4;

/**
 * The projections that follow the live batches behind the leading ones. Batches queue here as the leading
 * projections apply them, and are applied in order, those queued meanwhile joined into one transaction of up to
 * the batch size. A batch that none of them can apply is dropped: they fall behind it, and lanes catch them up.
 */
export class Trail {
  private readonly queue: StoredEvent[][] = [];
  private queued = 0;
  private running = false;
  private working?: Promise<void>;
  private drained?: () => void;

  constructor(
    private readonly projector: TrailProjector,
    private readonly members: readonly Projection[],
    /** The first seq of the batch being applied, or of the next to come. */
    private next: number,
    private readonly size: number,
    private readonly signal: AbortSignal,
    /** Called after each batch: a member that failed it is now behind the trail, and needs a lane. */
    private readonly applied: () => void,
  ) {}

  /** Whether a projection at `at` is one of the trail's that its batches will carry on from, so needs no lane. */
  carries(projection: Projection, at: number): boolean {
    return this.members.includes(projection) && at >= this.next - 1;
  }

  /** Queues a batch; waits while the trail is too far behind. */
  async push(batch: StoredEvent[]): Promise<void> {
    this.queue.push(batch);
    this.queued += batch.length;
    if (!this.running) this.working = this.work();
    while (this.queued > TRAIL_BATCHES * this.size && this.running) {
      await new Promise<void>((resolve) => (this.drained = resolve));
    }
  }

  /** Lets the batch under way finish and drops the rest: the follow that comes next starts from the checkpoints. */
  async stop(): Promise<void> {
    this.queue.length = 0;
    this.queued = 0;
    await this.working;
  }

  private async work(): Promise<void> {
    this.running = true;
    try {
      await this.drain();
    } finally {
      // In the same turn as the drain's last look at the queue, so a batch pushed after it starts a new one.
      this.running = false;
      this.queue.length = 0;
      this.queued = 0;
      this.drained?.();
      this.drained = undefined;
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.signal.aborted) {
      const joined: StoredEvent[] = [];
      while (this.queue.length > 0 && (joined.length === 0 || joined.length + this.queue[0]!.length <= this.size)) joined.push(...this.queue.shift()!);
      this.queued -= joined.length;
      this.next = joined[0]!.revision;
      try {
        await this.projector.applyLive(joined, this.members);
      } catch (error) {
        await this.projector.recover(error);
      }
      this.next = joined[joined.length - 1]!.revision + 1;
      this.applied();
      this.drained?.();
      this.drained = undefined;
    }
  }
}
