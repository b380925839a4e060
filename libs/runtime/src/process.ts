/**
 * The life of a service process: start its work, stop it cleanly on SIGINT or SIGTERM, and exit 1 with
 * the reason when it cannot start. `start` answers how to stop what it started.
 */
export function runUntilSignalled(name: string, start: () => Promise<{ log: { info(obj: object, msg: string): void }; stop(): Promise<void> }>): void {
  start()
    .then(({ log, stop }) => {
      const onSignal = async (signal: string) => {
        log.info({ signal }, 'shutting down');
        await stop();
        process.exit(0);
      };
      process.once('SIGINT', () => void onSignal('SIGINT'));
      process.once('SIGTERM', () => void onSignal('SIGTERM'));
    })
    .catch((error) => {
      console.error(`${name} failed to start:`, error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
