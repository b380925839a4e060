/**
 * Group commit for private writes: items added while a flush is running share the next flush,
 * so N concurrent callers cost one round trip instead of N.
 */
export class Batcher<T> {
  private queue: Array<{ item: T; resolve(): void; reject(error: unknown): void }> = [];
  private running = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await this.flush(batch.map((b) => b.item));
          batch.forEach((b) => b.resolve());
        } catch (error) {
          batch.forEach((b) => b.reject(error));
        }
      }
    } finally {
      this.running = false;
    }
  }
}
