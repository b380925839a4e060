import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { ScanOptions, ScanProgress, ScanResult } from './chainScan';
import { startModuleWorker } from './workerThread';

/** Where a worker thread reads the stream from: its own connection to the event store's PostgreSQL server. */
export interface ScanSource {
  url: string;
  /** Schema-qualified events table. */
  table: string;
  applicationName?: string;
}

export interface ScanJob extends ScanSource {
  stream: string;
  head: number;
}

/** How often the serving thread tells the scan how busy it is. */
const LOAD_EVERY_MS = 100;

/** From the serving thread: the share of the last interval its event loop was busy (0..1). */
export interface LoadMessage {
  kind: 'load';
  busy: number;
}

export type ScanMessage =
  | ({ kind: 'page' } & ScanProgress)
  | { kind: 'done'; result: ScanResult }
  | { kind: 'failed'; message: string };

/** scanChain over `stream` in a worker thread; `onPage` and `signal` behave as in the serving thread. */
export function scanChainInWorker(source: ScanSource, stream: string, options: ScanOptions): Promise<ScanResult> {
  const worker = startModuleWorker(__dirname, 'chainScanWorker', { ...source, stream, head: options.head } satisfies ScanJob, __filename.endsWith('.js'));
  return new Promise<ScanResult>((resolve, reject) => {
    let settled = false;
    let pages = Promise.resolve();
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', stop);
      clearInterval(sampler);
      // Progress already reported is applied before the result, in order.
      void pages.then(outcome, reject).finally(() => void worker.terminate());
    };
    const stop = () => worker.postMessage('stop');
    options.signal?.addEventListener('abort', stop, { once: true });
    // The scan yields to requests: it pauses between pages while this thread is busy serving (scanWorker).
    let last: EventLoopUtilization = performance.eventLoopUtilization();
    const sampler = setInterval(() => {
      const now = performance.eventLoopUtilization();
      worker.postMessage({ kind: 'load', busy: performance.eventLoopUtilization(now, last).utilization } satisfies LoadMessage);
      last = now;
    }, LOAD_EVERY_MS);
    sampler.unref();
    worker.once('exit', () => clearInterval(sampler));
    worker.on('message', (message: ScanMessage) => {
      if (message.kind === 'page') {
        const { checked, prev } = message;
        pages = pages.then(() => options.onPage?.({ checked, prev }));
      } else if (message.kind === 'done') settle(() => resolve(message.result));
      else settle(() => reject(new Error(`full chain scan failed: ${message.message}`)));
    });
    worker.on('error', (error) => settle(() => reject(error)));
    worker.on('exit', (code) => settle(() => reject(new Error(`full chain scan thread exited with code ${code}`))));
  });
}
