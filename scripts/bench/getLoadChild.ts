/**
 * A GET load in its own process, so that its latencies are the server's and not also its own event loop's:
 * reads {url, path, clients, warmupMs, durationMs} as JSON from argv[2], prints the LoadResult as JSON.
 */
import { runLoad } from './load';

const options = JSON.parse(process.argv[2]!) as { url: string; path: string; clients: number; warmupMs: number; durationMs: number };
runLoad({ ...options, get: { path: () => options.path }, maxRequests: 10_000_000, timeoutMs: 10_000, body: () => '' }).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
