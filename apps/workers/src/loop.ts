import type { Logger } from 'pino';
import type { Bus, Notification } from '@svc/bus';

export interface WorkerLoopOptions {
  /** Names the loop in the log. */
  name: string;
  log: Logger;
  /**
   * One pass; resolves with how long to sleep before the next one (ms), 0 to run it at once. `signal` aborts when
   * the loop stops, so a long pass can end early and leave the rest to the next start or another process.
   */
  pass(signal: AbortSignal): Promise<number>;
  /** How long to sleep after a pass that threw. */
  retryMs: number;
  /** Bus channels whose messages wake the loop early: by channel, whether a message is worth a pass. */
  wakeOn?: { bus?: Bus; channels: Record<string, (message: Notification) => boolean> };
}

/** What a pass, or any work the worker runs outside its loop, throws once the worker is stopping. */
export class WorkerStopping extends Error {
  constructor(name: string) {
    super(`the ${name} is stopping`);
  }
}

/**
 * The one loop every worker runs on: a pass, then a sleep until the pass's own deadline, a timer, or a wake (a
 * call, or a bus message); one pass at a time. A failing pass is logged once, not once a pass, until one works
 * again. stop() lets the pass in flight finish (or end early on its signal) before it resolves.
 */
export class WorkerLoop {
  private readonly stopSignal = new AbortController();
  private wakeRequested = false;
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> = Promise.resolve();
  private unsubscribe: Array<() => Promise<void>> = [];
  private failing = false;

  constructor(private readonly options: WorkerLoopOptions) {}

  /** Aborted once stop() is called, with a WorkerStopping as its reason (`signal.throwIfAborted()` throws it). */
  get signal(): AbortSignal {
    return this.stopSignal.signal;
  }

  get stopping(): boolean {
    return this.stopSignal.signal.aborted;
  }

  /** Whether a wake came since the pass in flight began: the next one runs without a sleep. */
  get woken(): boolean {
    return this.wakeRequested;
  }

  async start(): Promise<void> {
    const { bus, channels } = this.options.wakeOn ?? { channels: {} };
    if (bus) {
      for (const [channel, worthAPass] of Object.entries(channels)) {
        this.unsubscribe.push(
          await bus.subscribe(channel, (message) => {
            if (worthAPass(message)) this.wake();
          }),
        );
      }
    }
    this.running = this.run();
  }

  /** Runs the next pass now, or right after the one in flight. */
  wake(): void {
    this.wakeRequested = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    if (!this.stopping) this.stopSignal.abort(new WorkerStopping(this.options.name));
    this.wake();
    await Promise.all(this.unsubscribe.splice(0).map((unsubscribe) => unsubscribe().catch(() => undefined)));
    await this.running;
  }

  private async run(): Promise<void> {
    const { name, log, retryMs } = this.options;
    while (!this.stopping) {
      this.wakeRequested = false;
      let sleepMs = retryMs;
      try {
        sleepMs = await this.options.pass(this.signal);
        if (this.failing) log.info(`${name} works again`);
        this.failing = false;
      } catch (error) {
        if (this.stopping) break;
        if (!this.failing) log.warn({ err: error }, `${name} failed; trying again every ${retryMs} ms until it works`);
        this.failing = true;
      }
      await this.sleep(sleepMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.wakeRequested || this.stopping) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}

/**
 * Renews a lease in the database a third of its length apart while work runs under it: a process that lives keeps
 * it, one that dies gives it up when it runs out. `lost` turns true once a renewal finds another process holds it.
 */
export function renewWhileHeld(renew: () => Promise<boolean>, leaseMs: number, log: Logger, what: string): { readonly lost: boolean; stop(): void } {
  let lost = false;
  const timer = setInterval(() => {
    renew().then(
      (held) => (lost ||= !held),
      (error) => log.warn({ err: error }, `${what} lease not renewed`),
    );
  }, Math.max(1_000, leaseMs / 3));
  timer.unref();
  return {
    get lost() {
      return lost;
    },
    stop: () => clearInterval(timer),
  };
}
