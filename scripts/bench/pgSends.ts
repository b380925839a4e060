import { performance } from 'node:perf_hooks';
import pg from 'pg';

export interface PgSends {
  queries: number;
  /** Time spent inside pg's Query.submit: serialising the query and writing it to the socket, on the event loop. */
  syncMs: number;
  /** The statements sent most, by their text (cut short): how many times each. */
  statements: Array<{ text: string; count: number }>;
}

const STATEMENT_CHARS = 160;
const counted = { queries: 0, syncMs: 0 };
const byText = new Map<string, number>();
let installed = false;

/**
 * Counts every query this process sends to PostgreSQL (through `pg`, which kysely and the ledger use) and times
 * the synchronous write of each, from here, without changing the service: a profile showed the socket write
 * of each query as the largest native cost under the soak's load. Returns the function that reads the counts
 * since this call.
 */
export function countPgSends(): () => PgSends {
  const Query = (pg as unknown as { Query: { prototype: { submit(this: unknown, ...args: unknown[]): unknown } } }).Query;
  if (!installed) {
    installed = true;
    const submit = Query.prototype.submit;
    Query.prototype.submit = function timedSubmit(this: { text?: unknown }, ...args: unknown[]) {
      const text = typeof this.text === 'string' ? this.text.replace(/\s+/g, ' ').slice(0, STATEMENT_CHARS) : '(no text)';
      byText.set(text, (byText.get(text) ?? 0) + 1);
      const start = performance.now();
      try {
        return submit.apply(this, args);
      } finally {
        counted.syncMs += performance.now() - start;
        counted.queries++;
      }
    };
  }
  const from = { ...counted };
  const textsFrom = new Map(byText);
  return () => ({
    queries: counted.queries - from.queries,
    syncMs: counted.syncMs - from.syncMs,
    statements: [...byText]
      .map(([text, count]) => ({ text, count: count - (textsFrom.get(text) ?? 0) }))
      .filter((s) => s.count > 0)
      .sort((a, b) => b.count - a.count),
  });
}
