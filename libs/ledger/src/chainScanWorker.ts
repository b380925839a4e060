/**
 * Worker-thread entry of a full chain scan (see chainScanThread.ts): reads the ledger stream over its own
 * connection and hashes every row here, so the rows never pass through the serving thread's heap and its
 * garbage collections, and the hashing never takes a turn of its event loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { scanChain } from './chainScan';
import type { LoadMessage, ScanJob, ScanMessage } from './chainScanThread';

/** Below this share of busy time the serving thread is idle enough that the scan runs flat out. */
const IDLE = 0.2;
/** Pause after a page, in page-times per unit of busy share: at 50% busy the scan runs a seventh of the time. */
const YIELD = 12;

const job = workerData as ScanJob;
const abort = new AbortController();
let busy = 0;
parentPort!.on('message', (message: 'stop' | LoadMessage) => {
  if (message === 'stop') abort.abort();
  else busy = message.busy;
});

/** Pauses in proportion to how busy the serving thread is: a full pass must not move request latency. */
async function yieldToRequests(pageMs: number): Promise<void> {
  if (busy < IDLE || abort.signal.aborted) return;
  await sleep(pageMs * YIELD * busy, undefined, { signal: abort.signal }).catch(() => undefined);
}

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
    let pageStarted = performance.now();
    const text = `select revision, data from ${job.table} where stream = $1 and revision >= $2 order by revision limit $3`;
    const result = await scanChain(
      async (from, maxCount) => {
        const { rows } = await client.query<{ revision: string | number; data: string }>(text, [job.stream, from, maxCount]);
        return rows.map((row) => ({ revision: Number(row.revision), data: row.data }));
      },
      {
        head: job.head,
        signal: abort.signal,
        onPage: async (progress) => {
          parentPort!.postMessage({ kind: 'page', ...progress } satisfies ScanMessage);
          await yieldToRequests(performance.now() - pageStarted);
          pageStarted = performance.now();
        },
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
