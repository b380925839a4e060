/**
 * The child half of the parent/child protocol: one JSON line `{"bench":"ready","port":N}` on stdout
 * once listening, then run until SIGTERM/SIGINT or until the parent goes away (stdin closes).
 */
export function serveUntilStopped(port: number, close: () => Promise<void>, extra: Record<string, unknown> = {}): void {
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    // A close that hangs must not keep the child alive past the parent's patience.
    const force = setTimeout(() => process.exit(code), 10_000);
    force.unref();
    close()
      .catch((error) => console.error('close failed:', error))
      .finally(() => process.exit(code));
  };
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
  // Without this an orphan would keep a dropped database's connections and its port.
  process.stdin.on('end', () => stop(0));
  process.stdin.on('error', () => stop(0));
  process.stdin.resume();
  process.stdout.write(`${JSON.stringify({ bench: 'ready', port, ...extra })}\n`);
}

export function failStartup(error: unknown): never {
  console.error('failed to start:', error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
}
