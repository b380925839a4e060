/**
 * Worker-thread entry of a full chain scan (see chainScanThread.ts): reads the ledger stream over its own
 * connection and hashes every row here, so the rows never pass through the serving thread's heap and its
 * garbage collections, and the hashing never takes a turn of its event loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { scanChain } from './chainScan';
import type { ScanJob, ScanMessage } from './chainScanThread';

const job = workerData as ScanJob;
const abort = new AbortController();
parentPort!.on('message', (message: unknown) => {
  if (message === 'stop') abort.abort();
});

/** On Linux a thread can be given its own nice value: the scan yields the cores to requests first. */
function lowerPriority(): void {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, os.constants.priority.PRIORITY_LOW);
  } catch {
    // Not Linux, or not allowed: the scan runs at the process's priority.
  }
}

async function run(): Promise<void> {
  lowerPriority();
  const client = new pg.Client({ connectionString: job.url, application_name: job.applicationName });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const text = `select revision, data from ${job.table} where stream = $1 and revision >= $2 order by revision limit $3`;
    const result = await scanChain(
      async (from, maxCount) => {
        const { rows } = await client.query<{ revision: string | number; data: string }>(text, [job.stream, from, maxCount]);
        return rows.map((row) => ({ revision: Number(row.revision), data: row.data }));
      },
      {
        head: job.head,
        signal: abort.signal,
        onPage: (progress) => parentPort!.postMessage({ kind: 'page', ...progress } satisfies ScanMessage),
      },
    );
    parentPort!.postMessage({ kind: 'done', result } satisfies ScanMessage);
  } finally {
    await client.end().catch(() => undefined);
  }
}

run().catch((error: unknown) => {
  parentPort!.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies ScanMessage);
});
