import { isDatabaseUnavailable } from './unavailable';

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

  /**
   * Says it now; when the database did not answer, owes it under `id` (a later debt under the same id replaces it)
   * and throws what the database did. Any other failure is thrown and not owed: saying it again would not help.
   */
  async sayOrOwe(id: string, say: () => Promise<unknown>): Promise<void> {
    try {
      await say();
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.owe(id, say);
      throw error;
    }
  }

  private owe(id: string, say: () => Promise<unknown>): void {
    this.owed.set(id, say);
    if (this.timer) return;
    this.timer = setInterval(() => void this.pay(), this.everyMs);
    this.timer.unref();
  }

  /**
   * Says again what is owed, in order. The first the database still does not answer stops this round; one it
   * answers with an error is dropped, as it would fail the same way every time.
   */
  async pay(): Promise<void> {
    for (const [id, say] of [...this.owed]) {
      try {
        await say();
        this.owed.delete(id);
      } catch (error) {
        if (isDatabaseUnavailable(error)) return;
        this.owed.delete(id);
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
