/**
 * Last words a process owes the database: writes that free something (a key let go, a reserved row given back)
 * which the database did not take because it was down. Each is said again every `everyMs` until it is taken.
 * Unsaid, what it frees would stay held by this live process until its lease ran out, and every retry of the
 * request would wait that out.
 */
export class OwedWrites {
  private readonly owed = new Map<string, () => Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly everyMs: number) {}

  /** Owes `say` under `id`; a later debt under the same id replaces it. */
  owe(id: string, say: () => Promise<unknown>): void {
    this.owed.set(id, say);
    if (this.timer) return;
    this.timer = setInterval(() => void this.pay(), this.everyMs);
    this.timer.unref();
  }

  /** Says again what is owed, in order; the first that the database still does not take stops this round. */
  async pay(): Promise<void> {
    for (const [id, say] of [...this.owed]) {
      try {
        await say();
        this.owed.delete(id);
      } catch {
        return;
      }
    }
    if (this.owed.size === 0) this.stopTimer();
  }

  get size(): number {
    return this.owed.size;
  }

  /** Stops saying anything again, as a process that dies would. */
  close(): void {
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
