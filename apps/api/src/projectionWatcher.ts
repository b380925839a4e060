import { PROJECTED_CHANNEL, type Bus } from '@svc/bus';
import { readCheckpoint } from '@svc/projections';
import type { Kysely } from 'kysely';

/**
 * Knows how far the read models have got, from the projector's notifications on the bus, and lets a
 * read wait (bounded) until they reach a ledger position.
 */
export class ProjectionWatcher {
  private position = -1;
  private advancedAt = Date.now();
  private waiters = new Set<{ seq: number; wake(): void }>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly bus: Bus,
    private readonly db: Kysely<any>,
    private readonly schema: string,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.bus.subscribe(PROJECTED_CHANNEL, (message) => this.advance(message.seq));
    this.advance(await readCheckpoint(this.db, this.schema).catch(() => -1));
  }

  get seq(): number {
    return this.position;
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
  }

  /** Resolves true once the read models include `seq`, false if `ms` pass first. */
  async waitFor(seq: number, ms: number): Promise<boolean> {
    if (this.position >= seq) return true;
    // The bus is at-most-once: ask the database before waiting on a notification that may never come.
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
        this.advance(await readCheckpoint(this.db, this.schema).catch(() => this.position));
        resolve(this.position >= seq);
      }, ms);
      this.waiters.add(waiter);
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
  }
}
