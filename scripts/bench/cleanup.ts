import Redis from 'ioredis';

/** Steps to undo, run last-registered first, each attempted whatever the others do. */
export class Cleanup {
  private readonly steps: Array<{ what: string; run(): Promise<unknown> | unknown }> = [];
  private running?: Promise<void>;

  add(what: string, run: () => Promise<unknown> | unknown): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (error) {
          console.error(`cleanup: ${step.what} failed:`, error instanceof Error ? error.message : error);
        }
      }
    })();
    return this.running;
  }
}

export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    const stream = redis.scanStream({ match: `${prefix}:*`, count: 500 });
    for await (const keys of stream as AsyncIterable<string[]>) if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/**
 * Runs `main`, then `cleanup`, whatever happens: an error, SIGINT / SIGTERM, or `limitMs` passing (a hung
 * server or a stuck connection), so that a benchmark always drops what it made and stops by itself.
 */
export function runBench(name: string, limitMs: number, main: (cleanup: Cleanup) => Promise<void>): void {
  const cleanup = new Cleanup();
  const watchdog = setTimeout(() => {
    console.error(`${name}: still running after ${Math.round(limitMs / 1000)} s; giving up`);
    void cleanup.run().finally(() => process.exit(1));
  }, limitMs);
  // `on`, not `once`: tsx repeats a signal the child is slow to acknowledge, and with no listener left
  // that second one would end the process before the cleanup is done.
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`${name}: ${signal}, cleaning up`);
      void cleanup.run().finally(() => process.exit(130));
    });
  }
  main(cleanup)
    .then(
      () => cleanup.run(),
      async (error) => {
        console.error(`${name} failed:`, error instanceof Error ? (error.stack ?? error.message) : error);
        await cleanup.run();
        process.exitCode = 1;
      },
    )
    .finally(() => {
      clearTimeout(watchdog);
      // Unref'd: it fires only if a handle some library left open would keep a finished benchmark alive.
      setTimeout(() => process.exit(), 5_000).unref();
    });
}
